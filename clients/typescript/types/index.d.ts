export { OpenturnClient, Thread, Turn, CLIENT_NAME, CLIENT_VERSION } from "./client.js";
export { Connection, declineEveryCommand } from "./connection.js";
export { OpenturnError, JsonRpcError, DaemonExited, ProtocolError } from "./errors.js";
