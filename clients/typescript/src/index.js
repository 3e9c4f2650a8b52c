// openturn-client: spawn the openturn app-server, run threads and turns, stream their
// notifications, answer approvals and client-tool calls. Protocol types: ./types/protocol.d.ts,
// generated from the project's JSON Schema.

export { OpenturnClient, Thread, Turn, CLIENT_NAME, CLIENT_VERSION } from "./client.js";
export { Connection, declineEveryCommand } from "./connection.js";
export { OpenturnError, JsonRpcError, DaemonExited, ProtocolError } from "./errors.js";
