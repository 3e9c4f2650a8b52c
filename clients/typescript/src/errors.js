// Errors the client throws; every one is an OpenturnError.

/** Base class of every error this package throws. */
export class OpenturnError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "OpenturnError";
  }
}

/**
 * The daemon answered a request with a JSON-RPC error: `code` is the JSON-RPC code (-32602 bad
 * params, -32601 unknown method, -32001 overloaded, …), `data` the error's optional `data`
 * member, e.g. `{ reason: "thread_busy" }`.
 */
export class JsonRpcError extends OpenturnError {
  /**
   * @param {string} method
   * @param {number} code
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(method, code, message, data) {
    super(`${method}: ${message} (code ${code})`);
    this.name = "JsonRpcError";
    this.method = method;
    this.code = code;
    this.rpcMessage = message;
    this.data = data;
  }
}

/** The daemon exited (or closed its stdout) while the client still needed it. */
export class DaemonExited extends OpenturnError {
  /**
   * @param {number | null} exitCode
   * @param {string | null} signal
   * @param {string[]} stderrTail the last lines it logged, which usually say why
   */
  constructor(exitCode, signal, stderrTail) {
    const detail = stderrTail.slice(-20).join("\n");
    super(
      `openturn exited (${signal ? `signal ${signal}` : `status ${exitCode}`})` +
        (detail ? `; its last log lines:\n${detail}` : ""),
    );
    this.name = "DaemonExited";
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderrTail = stderrTail;
  }
}

/** The daemon sent something this client cannot read. */
export class ProtocolError extends OpenturnError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ProtocolError";
  }
}
