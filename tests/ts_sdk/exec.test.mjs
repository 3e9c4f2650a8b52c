// The official Codex TypeScript SDK (@openai/codex-sdk, pinned in package.json) driving
// `openturn exec` unchanged through its `codexPathOverride` option. Run by tests/exec_ts_sdk.rs,
// which starts one loopback mock provider per scenario and passes:
//   OPENTURN_BIN                  the openturn binary under test
//   OPENTURN_HOME                 a fresh home for threads
//   OPENTURN_MOCK_<SCENARIO>_URL  each scenario's provider base URL (…/v1)
//   OPENTURN_WORKDIR              a scratch directory for the tool call
//   OPENTURN_SCHEMA_EVENTS_FILE   where to write every streamed event, for the schema check
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { Codex } from "@openai/codex-sdk";

const bin = process.env.OPENTURN_BIN;
const eventsFile = process.env.OPENTURN_SCHEMA_EVENTS_FILE;

function codexFor(scenario) {
  const baseUrl = process.env[`OPENTURN_MOCK_${scenario}_URL`];
  assert.ok(bin && baseUrl, `OPENTURN_BIN and OPENTURN_MOCK_${scenario}_URL must be set`);
  return new Codex({ codexPathOverride: bin, baseUrl, apiKey: "sk-ts-sdk-test" });
}

/** Every event the SDK parsed goes to a file, so the Rust side checks it against the schema. */
function record(event) {
  if (eventsFile) appendFileSync(eventsFile, JSON.stringify(event) + "\n");
}

async function collect(thread, input, options) {
  const { events } = await thread.runStreamed(input, options);
  const seen = [];
  for await (const event of events) {
    record(event);
    seen.push(event);
  }
  return seen;
}

test("runStreamed streams thread, turn and items, then usage", async () => {
  const thread = codexFor("TEXT").startThread({ skipGitRepoCheck: true });
  const events = await collect(thread, "say hello");
  assert.deepEqual(
    events.map((e) => e.type),
    ["thread.started", "turn.started", "item.completed", "turn.completed"],
  );
  assert.equal(thread.id, events[0].thread_id);
  assert.deepEqual(events[2].item, { id: "item_0", type: "agent_message", text: "Hello from openturn" });
  assert.deepEqual(events[3].usage, {
    input_tokens: 10,
    cached_input_tokens: 0,
    cache_write_input_tokens: 0,
    output_tokens: 5,
    reasoning_output_tokens: 0,
  });
});

test("a tool call comes back as a completed command_execution item", async () => {
  const thread = codexFor("TOOL").startThread({
    approvalPolicy: "never",
    sandboxMode: "danger-full-access",
    workingDirectory: process.env.OPENTURN_WORKDIR,
    skipGitRepoCheck: true,
  });
  const turn = await thread.run("run the command");
  const command = turn.items.find((item) => item.type === "command_execution");
  assert.ok(command, JSON.stringify(turn.items));
  assert.equal(command.status, "completed");
  assert.equal(command.exit_code, 0);
  assert.equal(command.aggregated_output, "from-sdk-tool\n");
  assert.equal(turn.finalResponse, "The command ran.");
  assert.equal(turn.usage.input_tokens, 20);
  for (const item of turn.items) record({ type: "item.completed", item });
});

test("outputSchema shapes the answer", async () => {
  const thread = codexFor("SCHEMA").startThread({ skipGitRepoCheck: true });
  const schema = {
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false,
  };
  const turn = await thread.run("answer in JSON", { outputSchema: schema });
  assert.deepEqual(JSON.parse(turn.finalResponse), { answer: "forty-two" });
});

test("resumeThread continues a stored thread", async () => {
  const codex = codexFor("RESUME");
  const first = codex.startThread({ skipGitRepoCheck: true });
  const firstTurn = await first.run("remember the number 42");
  assert.equal(firstTurn.finalResponse, "Noted.");
  const resumed = codex.resumeThread(first.id, { skipGitRepoCheck: true });
  const events = await collect(resumed, "which number?");
  assert.deepEqual(events[0], { type: "thread.started", thread_id: first.id });
  const answer = events.find((e) => e.type === "item.completed" && e.item.type === "agent_message");
  assert.equal(answer.item.text, "It was 42.");
  const completed = events.at(-1);
  assert.equal(completed.type, "turn.completed");
  // Cumulative over the thread: both turns.
  assert.equal(completed.usage.input_tokens, 20);
});

test("a failing turn makes run() throw with the provider's message", async () => {
  const thread = codexFor("FAIL").startThread({ skipGitRepoCheck: true });
  await assert.rejects(thread.run("this will fail"), (error) => {
    assert.match(error.message, /the provider refused this request/);
    return true;
  });
});
