/** Base class of every error this package throws. */
export class OpenturnError extends Error {
    /** @param {string} message */
    constructor(message: string);
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
    constructor(method: string, code: number, message: string, data?: unknown);
    method: string;
    code: number;
    rpcMessage: string;
    data: unknown;
}
/** The daemon exited (or closed its stdout) while the client still needed it. */
export class DaemonExited extends OpenturnError {
    /**
     * @param {number | null} exitCode
     * @param {string | null} signal
     * @param {string[]} stderrTail the last lines it logged, which usually say why
     */
    constructor(exitCode: number | null, signal: string | null, stderrTail: string[]);
    exitCode: number | null;
    signal: string | null;
    stderrTail: string[];
}
/** The daemon sent something this client cannot read. */
export class ProtocolError extends OpenturnError {
}
