// The JSON-RPC connection to one spawned `openturn app-server` process.
//
// One reader owns the daemon's stdout: responses settle the promise of their request,
// server → client requests (approvals, client-tool calls) run their handler and are answered,
// and notifications go to the queue of the thread they name. stderr is drained into a bounded
// tail, so a daemon that logs a lot never blocks and an exit can say why.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

import { DaemonExited, JsonRpcError, OpenturnError, ProtocolError } from "./errors.js";

/** @typedef {import("../types/protocol.js").ServerNotification} ServerNotification */
/** @typedef {import("../types/protocol.js").CommandExecutionRequestApprovalParams} CommandExecutionRequestApprovalParams */
/** @typedef {import("../types/protocol.js").DynamicToolCallParams} DynamicToolCallParams */
/** @typedef {import("../types/protocol.js").DynamicToolCallResponse} DynamicToolCallResponse */
/** @typedef {import("../types/protocol.js").InitializeResponse} InitializeResponse */

/**
 * An approval decision: `"accept"`, `"acceptForSession"`, `"decline"`, `"cancel"`, or an object
 * form the daemon offers in `availableDecisions`.
 * @typedef {string | Record<string, unknown>} ApprovalDecision
 */
/** @typedef {(params: CommandExecutionRequestApprovalParams) => ApprovalDecision | Promise<ApprovalDecision>} ApprovalHandler */
/** @typedef {string | DynamicToolCallResponse} ToolResult */
/** @typedef {(params: DynamicToolCallParams) => ToolResult | Promise<ToolResult>} ToolHandler */
/** @typedef {(notification: ServerNotification) => void} NotificationHook */

/**
 * @typedef {object} SpawnOptions
 * @property {string} [binary] the openturn binary; default `$OPENTURN_BIN`, then `openturn` on PATH
 * @property {Record<string, unknown> | string[]} [config] `-c` overrides: an object (values
 *   written as TOML) or ready `"key=value"` strings
 * @property {Record<string, string>} [env] added to this process's environment (or replacing it
 *   when `inheritEnv` is false), so `OPENAI_API_KEY` and friends pass through
 * @property {boolean} [inheritEnv] default true
 * @property {string} [cwd] the daemon's working folder
 * @property {ApprovalHandler} [approvalHandler] answers command approvals; the default declines
 * @property {ToolHandler} [toolHandler] answers `item/tool/call` for `dynamicTools`
 * @property {NotificationHook} [onNotification] sees every notification
 */

const STDERR_TAIL_LINES = 200;

/** The default approval handler: nothing the model asks to run runs unless you say so. */
export function declineEveryCommand() {
  return "decline";
}

/**
 * A queue that a single async reader drains; `fail` makes every later read throw.
 * @template T
 */
export class AsyncQueue {
  constructor() {
    /** @type {T[]} */
    this.items = [];
    /** @type {((value: T) => void)[]} */
    this.waiters = [];
    /** @type {Error | null} */
    this.failure = null;
    /** @type {((error: Error) => void)[]} */
    this.rejecters = [];
  }

  /** @param {T} item */
  push(item) {
    const waiter = this.waiters.shift();
    this.rejecters.shift();
    if (waiter) waiter(item);
    else this.items.push(item);
  }

  /** @param {Error} error */
  fail(error) {
    this.failure = error;
    for (const reject of this.rejecters.splice(0)) reject(error);
    this.waiters.length = 0;
  }

  /** @returns {Promise<T>} */
  next() {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiters.push(resolve);
      this.rejecters.push(reject);
    });
  }
}

export class Connection {
  /**
   * Starts `binary -c k=v … app-server` and waits until the process is running.
   * @param {SpawnOptions} [options]
   * @returns {Promise<Connection>}
   */
  static async spawn(options = {}) {
    const binary = options.binary ?? process.env.OPENTURN_BIN ?? "openturn";
    const args = overrides(options.config ?? []).flatMap((override) => ["-c", override]);
    const env = { ...(options.inheritEnv === false ? {} : process.env), ...(options.env ?? {}) };
    const child = spawn(binary, [...args, "app-server"], {
      cwd: options.cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    await new Promise((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error) =>
        reject(new OpenturnError(`cannot start openturn from ${JSON.stringify(binary)}: ${error.message}`)),
      );
    });
    return new Connection(child, options);
  }

  /**
   * @param {import("node:child_process").ChildProcessWithoutNullStreams} child
   * @param {SpawnOptions} options
   */
  constructor(child, options) {
    this.child = child;
    this.approvalHandler = options.approvalHandler ?? declineEveryCommand;
    this.toolHandler = options.toolHandler;
    this.onNotification = options.onNotification;
    this.nextId = 1;
    /** @type {Map<number, { method: string, resolve: (value: any) => void, reject: (error: Error) => void }>} */
    this.pending = new Map();
    /** @type {Map<string, AsyncQueue<ServerNotification>>} */
    this.threads = new Map();
    /** @type {string[]} */
    this.stderrTail = [];
    /** @type {OpenturnError | null} */
    this.closed = null;
    /** @type {Promise<void>} */
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    // A write to a daemon that already exited reports EPIPE here; the exit itself is what
    // callers hear about, through `closed`.
    child.stdin.on("error", () => {});
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => this.receive(line));
    lines.on("close", () => {
      // The last stderr lines and the exit status usually follow stdout's end closely.
      const exit = Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 1000))]);
      exit.then(() =>
        this.failAll(this.closed ?? new DaemonExited(child.exitCode, child.signalCode, [...this.stderrTail])),
      );
    });
  }

  /**
   * The handshake every session starts with; experimental fields (dynamic tools) are on.
   * @param {string} name
   * @param {string} version
   * @returns {Promise<InitializeResponse>}
   */
  async initialize(name, version) {
    const result = await this.request("initialize", {
      clientInfo: { name, version },
      capabilities: { experimentalApi: true },
    });
    this.send({ jsonrpc: "2.0", method: "initialized" });
    return result;
  }

  /**
   * Sends one request and waits for its result; a JSON-RPC error rejects with JsonRpcError.
   * @param {string} method
   * @param {unknown} [params]
   * @returns {Promise<any>}
   */
  request(method, params) {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      /** @type {Record<string, unknown>} */
      const message = { jsonrpc: "2.0", id, method };
      if (params !== undefined) message.params = params;
      this.send(message);
    });
  }

  /**
   * The queue of every notification naming `threadId` (one per thread).
   * @param {string} threadId
   * @returns {AsyncQueue<ServerNotification>}
   */
  subscribe(threadId) {
    let queue = this.threads.get(threadId);
    if (!queue) {
      queue = new AsyncQueue();
      if (this.closed) queue.fail(this.closed);
      this.threads.set(threadId, queue);
    }
    return queue;
  }

  /**
   * Closes stdin (the daemon's signal to shut down) and waits; kills it after `timeoutMs`.
   * @param {number} [timeoutMs]
   * @returns {Promise<number | null>} the exit status
   */
  async close(timeoutMs = 5000) {
    this.child.stdin.end();
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    if ((await Promise.race([this.exited, timedOut])) === "timeout") {
      this.child.kill("SIGKILL");
      await this.exited;
    }
    clearTimeout(timer);
    return this.child.exitCode;
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    if (!this.child.stdin.writable) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** @param {OpenturnError} error */
  failAll(error) {
    this.closed = error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    for (const queue of this.threads.values()) queue.fail(error);
  }

  /** @param {string} line */
  receive(line) {
    /** @type {any} */
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.failAll(new ProtocolError(`openturn wrote a line that is not JSON: ${line.slice(0, 200)}`));
      this.child.kill("SIGKILL");
      return;
    }
    if (typeof message !== "object" || message === null) return;
    if (typeof message.method === "string" && message.id !== undefined) {
      this.answer(message.id, message.method, message.params);
    } else if (typeof message.method === "string") {
      const notification = /** @type {ServerNotification} */ ({ method: message.method, params: message.params ?? {} });
      this.onNotification?.(notification);
      const threadId = /** @type {any} */ (notification.params).threadId;
      if (typeof threadId === "string") this.subscribe(threadId).push(notification);
    } else if (message.id !== undefined) {
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      if (message.error) {
        const { code = 0, message: text = "", data } = message.error;
        entry.reject(new JsonRpcError(entry.method, code, text, data));
      } else {
        entry.resolve(message.result);
      }
    }
  }

  /**
   * Runs the handler of one server → client request and sends its reply.
   * @param {number | string} id
   * @param {string} method
   * @param {any} params
   */
  async answer(id, method, params) {
    /** @type {Record<string, unknown>} */
    const reply = { jsonrpc: "2.0", id };
    try {
      if (method === "item/commandExecution/requestApproval") {
        reply.result = { decision: await this.approvalHandler(params) };
      } else if (method === "item/tool/call") {
        reply.result = await this.callTool(params);
      } else {
        reply.error = { code: -32601, message: `openturn-client does not handle server request ${method}` };
      }
    } catch (error) {
      // A handler's own failure goes back to the daemon, not up the stack.
      reply.error = { code: -32603, message: `${method} handler failed: ${errorMessage(error)}` };
    }
    this.send(reply);
  }

  /**
   * @param {DynamicToolCallParams} params
   * @returns {Promise<DynamicToolCallResponse | { code: number, message: string }>}
   */
  async callTool(params) {
    if (!this.toolHandler) {
      throw new OpenturnError(`no toolHandler: cannot run client tool ${params.tool}`);
    }
    try {
      const result = await this.toolHandler(params);
      if (typeof result === "string") {
        return { contentItems: [{ type: "inputText", text: result }], success: true };
      }
      return result;
    } catch (error) {
      // The model hears that the tool failed, and why; the turn goes on.
      return { contentItems: [{ type: "inputText", text: errorMessage(error) }], success: false };
    }
  }
}

/** @param {unknown} error */
function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * @param {Record<string, unknown> | string[]} config
 * @returns {string[]}
 */
function overrides(config) {
  if (Array.isArray(config)) return config.map(String);
  return Object.entries(config).map(([key, value]) => `${key}=${tomlValue(value)}`);
}

/**
 * @param {unknown} value
 * @returns {string}
 */
function tomlValue(value) {
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value); // a JSON string is a TOML basic string
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (value && typeof value === "object") {
    const fields = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)} = ${tomlValue(item)}`);
    return `{${fields.join(", ")}}`;
  }
  throw new TypeError(`config value ${String(value)} has no TOML form`);
}
