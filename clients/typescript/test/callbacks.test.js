// Server → client requests: command approvals and client tools (`dynamicTools`).

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { cleanup, skipReason, startClient, tempDir, TIMEOUT_MS } from "./support.js";

const options = { skip: skipReason ?? false, timeout: TIMEOUT_MS };

test("an accepted command runs and the handler sees what it approves", options, async () => {
  const home = await tempDir();
  const workdir = join(home, "work");
  await mkdir(workdir);
  const asked = [];
  const client = await startClient("approval_accept", home, {
    approvalHandler: (params) => {
      asked.push(params);
      return "accept";
    },
  });
  try {
    const thread = await client.threadStart({ cwd: workdir, approvalPolicy: "untrusted" });
    const result = await thread.run("make a file");
    assert.equal(result.status, "completed");
    assert.equal(asked.length, 1);
    assert.match(asked[0].command, /echo approved > approved\.txt/);
    assert.equal(asked[0].threadId, thread.id);
    assert.equal(readFileSync(join(workdir, "approved.txt"), "utf8"), "approved\n");
    const command = result.items.find((item) => item.type === "commandExecution");
    assert.equal(command?.type === "commandExecution" && command.status, "completed");
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("the default handler declines, so nothing runs", options, async () => {
  const home = await tempDir();
  const workdir = join(home, "work");
  await mkdir(workdir);
  const client = await startClient("approval_default", home);
  try {
    const thread = await client.threadStart({ cwd: workdir, approvalPolicy: "untrusted" });
    const result = await thread.run("make a file");
    assert.equal(result.status, "completed");
    assert.equal(existsSync(join(workdir, "declined.txt")), false);
    const command = result.items.find((item) => item.type === "commandExecution");
    assert.equal(command?.type === "commandExecution" && command.status, "declined");
  } finally {
    await client.close();
    await cleanup(home);
  }
});

test("a client tool call is answered by the tool handler", options, async () => {
  const home = await tempDir();
  const calls = [];
  const client = await startClient("client_tool", home, {
    toolHandler: (params) => {
      calls.push(params);
      return `ticket ${/** @type {any} */ (params.arguments).id} is open`;
    },
  });
  try {
    const lookup = {
      type: "function",
      name: "lookup_ticket",
      description: "Look up a ticket",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
    };
    const thread = await client.threadStart({ dynamicTools: [lookup] });
    const result = await thread.run("is ABC-123 open?");
    assert.deepEqual(calls.map((c) => c.tool), ["lookup_ticket"]);
    assert.deepEqual(calls[0].arguments, { id: "ABC-123" });
    assert.equal(result.finalText, "the ticket is open");
  } finally {
    await client.close();
    await cleanup(home);
  }
});
