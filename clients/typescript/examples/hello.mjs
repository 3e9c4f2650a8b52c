import { OpenturnClient } from "openturn-client";

const client = await OpenturnClient.start({
  config: { model_provider: "demo" },      // -c overrides, values written as TOML
  approvalHandler: (params) => {           // without it every approval is declined
    console.log(`\n[approving ${params.command}]`);
    return "accept";                       // or "acceptForSession", "decline", "cancel"
  },
});
try {
  const thread = await client.threadStart({ sandbox: "workspace-write" }); // may write in its cwd
  const turn = await thread.startTurn("Run a command and edit a file");
  for await (const n of turn) {            // ends after turn/completed
    if (n.method === "item/agentMessage/delta") process.stdout.write(n.params.delta);
  }
  process.stdout.write("\n");
  if (turn.result?.status !== "completed") {
    console.error(`turn ${turn.result?.status}: ${turn.result?.turn.error?.message ?? "no reason given"}`);
    process.exitCode = 1;
  }
} finally {
  await client.close();
}
