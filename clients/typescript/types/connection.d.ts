/** The default approval handler: nothing the model asks to run runs unless you say so. */
export function declineEveryCommand(): string;
/**
 * A queue that a single async reader drains; `fail` makes every later read throw.
 * @template T
 */
export class AsyncQueue<T> {
    /** @type {T[]} */
    items: T[];
    /** @type {((value: T) => void)[]} */
    waiters: ((value: T) => void)[];
    /** @type {Error | null} */
    failure: Error | null;
    /** @type {((error: Error) => void)[]} */
    rejecters: ((error: Error) => void)[];
    /** @param {T} item */
    push(item: T): void;
    /** @param {Error} error */
    fail(error: Error): void;
    /** @returns {Promise<T>} */
    next(): Promise<T>;
}
export class Connection {
    /**
     * Starts `binary -c k=v … app-server` and waits until the process is running.
     * @param {SpawnOptions} [options]
     * @returns {Promise<Connection>}
     */
    static spawn(options?: SpawnOptions): Promise<Connection>;
    /**
     * @param {import("node:child_process").ChildProcessWithoutNullStreams} child
     * @param {SpawnOptions} options
     */
    constructor(child: import("node:child_process").ChildProcessWithoutNullStreams, options: SpawnOptions);
    child: import("child_process").ChildProcessWithoutNullStreams;
    approvalHandler: ApprovalHandler;
    toolHandler: ToolHandler | undefined;
    onNotification: NotificationHook | undefined;
    nextId: number;
    /** @type {Map<number, { method: string, resolve: (value: any) => void, reject: (error: Error) => void }>} */
    pending: Map<number, {
        method: string;
        resolve: (value: any) => void;
        reject: (error: Error) => void;
    }>;
    /** @type {Map<string, AsyncQueue<ServerNotification>>} */
    threads: Map<string, AsyncQueue<ServerNotification>>;
    /** @type {string[]} */
    stderrTail: string[];
    /** @type {OpenturnError | null} */
    closed: OpenturnError | null;
    /** @type {Promise<void>} */
    exited: Promise<void>;
    /**
     * The handshake every session starts with; experimental fields (dynamic tools) are on.
     * @param {string} name
     * @param {string} version
     * @returns {Promise<InitializeResponse>}
     */
    initialize(name: string, version: string): Promise<InitializeResponse>;
    /**
     * Sends one request and waits for its result; a JSON-RPC error rejects with JsonRpcError.
     * @param {string} method
     * @param {unknown} [params]
     * @returns {Promise<any>}
     */
    request(method: string, params?: unknown): Promise<any>;
    /**
     * The queue of every notification naming `threadId` (one per thread).
     * @param {string} threadId
     * @returns {AsyncQueue<ServerNotification>}
     */
    subscribe(threadId: string): AsyncQueue<ServerNotification>;
    /**
     * Closes stdin (the daemon's signal to shut down) and waits; kills it after `timeoutMs`.
     * @param {number} [timeoutMs]
     * @returns {Promise<number | null>} the exit status
     */
    close(timeoutMs?: number): Promise<number | null>;
    /** @param {Record<string, unknown>} message */
    send(message: Record<string, unknown>): void;
    /** @param {OpenturnError} error */
    failAll(error: OpenturnError): void;
    /** @param {string} line */
    receive(line: string): void;
    /**
     * Runs the handler of one server → client request and sends its reply.
     * @param {number | string} id
     * @param {string} method
     * @param {any} params
     */
    answer(id: number | string, method: string, params: any): Promise<void>;
    /**
     * @param {DynamicToolCallParams} params
     * @returns {Promise<DynamicToolCallResponse | { code: number, message: string }>}
     */
    callTool(params: DynamicToolCallParams): Promise<DynamicToolCallResponse | {
        code: number;
        message: string;
    }>;
}
export type ServerNotification = import("../types/protocol.js").ServerNotification;
export type CommandExecutionRequestApprovalParams = import("../types/protocol.js").CommandExecutionRequestApprovalParams;
export type DynamicToolCallParams = import("../types/protocol.js").DynamicToolCallParams;
export type DynamicToolCallResponse = import("../types/protocol.js").DynamicToolCallResponse;
export type InitializeResponse = import("../types/protocol.js").InitializeResponse;
/**
 * An approval decision: `"accept"`, `"acceptForSession"`, `"decline"`, `"cancel"`, or an object
 * form the daemon offers in `availableDecisions`.
 */
export type ApprovalDecision = string | Record<string, unknown>;
export type ApprovalHandler = (params: CommandExecutionRequestApprovalParams) => ApprovalDecision | Promise<ApprovalDecision>;
export type ToolResult = string | DynamicToolCallResponse;
export type ToolHandler = (params: DynamicToolCallParams) => ToolResult | Promise<ToolResult>;
export type NotificationHook = (notification: ServerNotification) => void;
export type SpawnOptions = {
    /**
     * the openturn binary; default `$OPENTURN_BIN`, then `openturn` on PATH
     */
    binary?: string | undefined;
    /**
     * `-c` overrides: an object (values
     * written as TOML) or ready `"key=value"` strings
     */
    config?: string[] | Record<string, unknown> | undefined;
    /**
     * added to this process's environment (or replacing it
     * when `inheritEnv` is false), so `OPENAI_API_KEY` and friends pass through
     */
    env?: Record<string, string> | undefined;
    /**
     * default true
     */
    inheritEnv?: boolean | undefined;
    /**
     * the daemon's working folder
     */
    cwd?: string | undefined;
    /**
     * answers command approvals; the default declines
     */
    approvalHandler?: ApprovalHandler | undefined;
    /**
     * answers `item/tool/call` for `dynamicTools`
     */
    toolHandler?: ToolHandler | undefined;
    /**
     * sees every notification
     */
    onNotification?: NotificationHook | undefined;
};
import { OpenturnError } from "./errors.js";
