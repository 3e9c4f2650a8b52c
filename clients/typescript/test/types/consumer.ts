// A TypeScript program using the package the way a consumer would (by its name, through the
// `exports` map): compiled with --noEmit by generated.test.js, never run. The @ts-expect-error
// lines prove the declarations are strict enough to catch mistakes.
import { JsonRpcError, OpenturnClient } from "openturn-client";
import type { ServerNotification, ThreadStartParams } from "openturn-client/protocol";

export async function consumer(): Promise<string | null> {
  const client = await OpenturnClient.start({
    binary: "openturn",
    config: { model: "gpt-5" },
    approvalHandler: (params) => (params.command.startsWith("ls") ? "accept" : "decline"),
    toolHandler: async (params) => `called ${params.tool}`,
  });
  const params: ThreadStartParams = { cwd: "/tmp", approvalPolicy: "untrusted" };
  const thread = await client.threadStart(params);
  const turn = await thread.startTurn("hi", { effort: "low" });
  let text = "";
  for await (const notification of turn) {
    const n: ServerNotification = notification;
    if (n.method === "item/agentMessage/delta") text += n.params.delta;
  }
  // @ts-expect-error a misspelled field is rejected
  await client.threadStart({ modle: "gpt-5" });
  // @ts-expect-error approval policies are a closed set
  await client.threadStart({ approvalPolicy: "sometimes" });
  try {
    await client.threadResume(thread.id);
  } catch (error) {
    if (error instanceof JsonRpcError) return `${error.code}`;
  }
  const result = await thread.run("again");
  await client.close();
  return result.finalText ?? text;
}
