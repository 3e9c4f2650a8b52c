// The official Codex TypeScript SDK aborting a run of `openturn exec` through its `signal`
// option (an AbortSignal: Node kills the child with SIGTERM). Run by tests/exec_ts_sdk.rs, which
// passes OPENTURN_BIN, OPENTURN_HOME, OPENTURN_SCHEMA_EVENTS_FILE and OPENTURN_MOCK_STALL_URL, a
// provider that starts answering and then never finishes.
//
// The SDK rejects an aborted run with its AbortError only when the run ends without a
// `turn.failed` event: `run()` stops at that event and rejects with its message instead. The
// same generator feeds `run()` and `runStreamed()`, so the test watches the events through
// `runStreamed()` (to abort once the turn started) and holds both halves: no `turn.failed`, and
// the AbortError.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { Codex } from "@openai/codex-sdk";

test("aborting a run rejects with the SDK's AbortError", async () => {
  const bin = process.env.OPENTURN_BIN;
  const baseUrl = process.env.OPENTURN_MOCK_STALL_URL;
  const eventsFile = process.env.OPENTURN_SCHEMA_EVENTS_FILE;
  assert.ok(bin && baseUrl && eventsFile, "OPENTURN_BIN, OPENTURN_MOCK_STALL_URL and OPENTURN_SCHEMA_EVENTS_FILE must be set");
  const codex = new Codex({ codexPathOverride: bin, baseUrl, apiKey: "sk-ts-sdk-test" });
  const thread = codex.startThread({ skipGitRepoCheck: true });
  const controller = new AbortController();
  const { events } = await thread.runStreamed("never finishes", { signal: controller.signal });
  const seen = [];
  await assert.rejects(
    async () => {
      for await (const event of events) {
        appendFileSync(eventsFile, JSON.stringify(event) + "\n");
        seen.push(event.type);
        if (event.type === "turn.started") controller.abort();
      }
    },
    (error) => {
      assert.equal(error.name, "AbortError", `${error.name}: ${error.message}`);
      return true;
    },
  );
  assert.deepEqual(seen, ["thread.started", "turn.started"]);
});
