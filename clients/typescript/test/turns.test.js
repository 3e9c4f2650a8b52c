// Threads and turns through the real daemon: streaming, reading, listing, resuming,
// interrupting, steering, and a provider failure.

import assert from "node:assert/strict";
import { test } from "node:test";

import { cleanup, skipReason, startClient, tempDir, TIMEOUT_MS } from "./support.js";

const options = { skip: skipReason ?? false, timeout: TIMEOUT_MS };

test("a turn streams its deltas in order and ends with turn/completed", options, async () => {
  const home = await tempDir();
  const client = await startClient("stream", home);
  try {
    const thread = await client.threadStart();
    const turn = await thread.startTurn("hi");
    const methods = [];
    const deltas = [];
    for await (const notification of turn) {
      methods.push(notification.method);
      if (notification.method === "item/agentMessage/delta") deltas.push(notification.params.delta);
    }
    assert.deepEqual(deltas, ["Hello", " from", " open", "turn"]);
    assert.ok(methods.indexOf("turn/started") < methods.indexOf("item/started"));
    assert.ok(methods.indexOf("item/started") < methods.indexOf("item/agentMessage/delta"));
    assert.equal(methods.at(-1), "turn/completed");
    assert.equal(turn.result?.status, "completed");
    assert.equal(turn.result?.finalText, "Hello from openturn");

    const read = await thread.read();
    assert.deepEqual(read.thread.turns?.map((t) => t.id), [turn.id]);
    const listed = await client.threadList();
    assert.ok(listed.data.some((t) => t.id === thread.id));
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("a thread resumed in a new daemon continues with its history", options, async () => {
  const home = await tempDir();
  try {
    const first = await startClient("resume", home);
    const thread = await first.threadStart();
    assert.equal((await thread.run("question one")).finalText, "first answer");
    await first.close();
    // The first daemon has exited: its lock on the thread is gone.
    const second = await startClient("resume", home);
    try {
      const resumed = await second.threadResume(thread.id);
      assert.equal(resumed.id, thread.id);
      assert.equal((await resumed.run("question two")).finalText, "second answer");
      const read = await second.threadRead(thread.id, { includeTurns: true });
      assert.equal(read.thread.turns?.length, 2);
    } finally {
      await second.close();
    }
  } finally {
    await cleanup(home);
  }
});

test("interrupt ends a running turn as interrupted", options, async () => {
  const home = await tempDir();
  const client = await startClient("interrupt", home);
  try {
    const thread = await client.threadStart();
    const turn = await thread.startTurn("count slowly");
    let interrupted = false;
    for await (const notification of turn) {
      if (notification.method === "item/agentMessage/delta" && !interrupted) {
        await turn.interrupt();
        interrupted = true;
      }
    }
    assert.ok(interrupted);
    assert.equal(turn.result?.status, "interrupted");
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("steer adds input to the running turn", options, async () => {
  const home = await tempDir();
  const client = await startClient("steer", home);
  try {
    const thread = await client.threadStart();
    const turn = await thread.startTurn("say letters");
    let steered = false;
    for await (const notification of turn) {
      if (notification.method === "item/agentMessage/delta" && !steered) {
        await turn.steer("please also say steered");
        steered = true;
      }
    }
    assert.ok(steered);
    assert.equal(turn.result?.status, "completed");
    assert.equal(turn.result?.finalText, "steered");
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("a provider error fails the turn and the daemon keeps serving", options, async () => {
  const home = await tempDir();
  const client = await startClient("provider_error", home);
  try {
    const thread = await client.threadStart();
    const turn = await thread.startTurn("hi");
    const errors = [];
    for await (const notification of turn) {
      if (notification.method === "error") errors.push(notification);
    }
    assert.equal(turn.result?.status, "failed");
    assert.ok(turn.result?.turn.error, "the turn carries its error");
    assert.ok(errors.length > 0, "an error notification says what went wrong");
    const listed = await client.threadList();
    assert.ok(listed.data.some((t) => t.id === thread.id));
  } finally {
    await client.close();
    await cleanup(home);
  }
});
