// Failures surface as errors that say what is wrong.

import assert from "node:assert/strict";
import { test } from "node:test";

import { DaemonExited, JsonRpcError, OpenturnClient, OpenturnError, ProtocolError } from "../src/index.js";
import { cleanup, skipReason, startClient, tempDir, TIMEOUT_MS } from "./support.js";

const options = { skip: skipReason ?? false, timeout: TIMEOUT_MS };

test("a JSON-RPC error carries its code and method", options, async () => {
  const home = await tempDir();
  const client = await startClient("stream", home);
  try {
    await assert.rejects(client.request("turn/start", { threadId: "no-such-thread", input: "not a list" }), (error) => {
      assert.ok(error instanceof JsonRpcError);
      assert.equal(error.code, -32602);
      assert.equal(error.method, "turn/start");
      assert.match(error.message, /input/);
      return true;
    });
    await assert.rejects(client.request("no/such/method", {}), (error) => {
      assert.ok(error instanceof JsonRpcError);
      assert.equal(error.code, -32601);
      return true;
    });
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("an error carries its data: a thread loaded elsewhere is busy", options, async () => {
  const home = await tempDir();
  const first = await startClient("stream", home);
  const second = await startClient("stream", home);
  try {
    const thread = await first.threadStart();
    await assert.rejects(second.threadResume(thread.id), (error) => {
      assert.ok(error instanceof JsonRpcError);
      assert.equal(/** @type {any} */ (error.data)?.reason, "thread_busy");
      return true;
    });
  } finally {
    await first.close();
    await second.close();
    await cleanup(home);
  }
});

test("a missing binary is an error naming the path", { timeout: TIMEOUT_MS }, async () => {
  await assert.rejects(OpenturnClient.start({ binary: "/nonexistent/not-openturn" }), (error) => {
    assert.ok(error instanceof OpenturnError);
    assert.match(error.message, /not-openturn/);
    return true;
  });
});

test("a binary that is not openturn is a protocol error naming its output", { timeout: TIMEOUT_MS }, async () => {
  // `echo app-server` prints a line that is not JSON-RPC.
  await assert.rejects(OpenturnClient.start({ binary: "/bin/echo" }), (error) => {
    assert.ok(error instanceof ProtocolError, String(error));
    assert.match(error.message, /app-server/);
    return true;
  });
});

test("a daemon that exits at once is DaemonExited with its status", { timeout: TIMEOUT_MS }, async () => {
  await assert.rejects(OpenturnClient.start({ binary: "/bin/false" }), (error) => {
    assert.ok(error instanceof DaemonExited, String(error));
    assert.equal(error.exitCode, 1);
    return true;
  });
});
