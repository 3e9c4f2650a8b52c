/** @typedef {import("../types/protocol.js").ServerNotification} ServerNotification */
/** @typedef {import("../types/protocol.js").InitializeResponse} InitializeResponse */
/** @typedef {import("../types/protocol.js").ThreadStartParams} ThreadStartParams */
/** @typedef {import("../types/protocol.js").ThreadResumeParams} ThreadResumeParams */
/** @typedef {import("../types/protocol.js").ThreadReadParams} ThreadReadParams */
/** @typedef {import("../types/protocol.js").ThreadReadResponse} ThreadReadResponse */
/** @typedef {import("../types/protocol.js").ThreadListParams} ThreadListParams */
/** @typedef {import("../types/protocol.js").ThreadListResponse} ThreadListResponse */
/** @typedef {import("../types/protocol.js").ModelListParams} ModelListParams */
/** @typedef {import("../types/protocol.js").ModelListResponse} ModelListResponse */
/** @typedef {import("../types/protocol.js").ThreadStartResponse} ThreadStartResponse */
/** @typedef {import("../types/protocol.js").TurnStartParams} TurnStartParams */
/** @typedef {import("../types/protocol.js").TurnStartResponse} TurnStartResponse */
/** @typedef {import("../types/protocol.js").Thread} ThreadInfo */
/** @typedef {import("../types/protocol.js").Turn} TurnInfo */
/** @typedef {import("../types/protocol.js").ThreadItem} ThreadItem */
/** @typedef {import("../types/protocol.js").UserInput} UserInput */
/** @typedef {import("./connection.js").SpawnOptions} SpawnOptions */
/** Text, or a list of input items (`{type: "text", text}`, `{type: "localImage", path}`, …). */
/** @typedef {string | UserInput[]} Input */
/**
 * @typedef {SpawnOptions & { clientName?: string, clientVersion?: string }} StartOptions
 */
export const CLIENT_NAME: "openturn-client-node";
export const CLIENT_VERSION: "0.1.0";
/** One `openturn app-server` process and the session with it. */
export class OpenturnClient {
    /**
     * Spawns the daemon and performs the `initialize` handshake.
     * @param {StartOptions} [options]
     * @returns {Promise<OpenturnClient>}
     */
    static start(options?: StartOptions): Promise<OpenturnClient>;
    /**
     * @param {Connection} connection
     * @param {InitializeResponse} serverInfo
     */
    constructor(connection: Connection, serverInfo: InitializeResponse);
    connection: Connection;
    serverInfo: import("../types/protocol.js").InitializeResponse;
    /**
     * Any method by name (for methods without a helper).
     * @param {string} method
     * @param {unknown} [params]
     * @returns {Promise<any>}
     */
    request(method: string, params?: unknown): Promise<any>;
    /**
     * `thread/start`.
     * @param {ThreadStartParams} [params]
     * @returns {Promise<Thread>}
     */
    threadStart(params?: ThreadStartParams): Promise<Thread>;
    /**
     * `thread/resume`: loads a stored thread so turns can run on it again.
     * @param {string} threadId
     * @param {Omit<ThreadResumeParams, "threadId">} [params]
     * @returns {Promise<Thread>}
     */
    threadResume(threadId: string, params?: Omit<ThreadResumeParams, "threadId">): Promise<Thread>;
    /**
     * `thread/read`: a stored thread, with its turns when `includeTurns` is true.
     * @param {string} threadId
     * @param {Omit<ThreadReadParams, "threadId">} [params]
     * @returns {Promise<ThreadReadResponse>}
     */
    threadRead(threadId: string, params?: Omit<ThreadReadParams, "threadId">): Promise<ThreadReadResponse>;
    /**
     * `thread/list`: one page of stored threads.
     * @param {ThreadListParams} [params]
     * @returns {Promise<ThreadListResponse>}
     */
    threadList(params?: ThreadListParams): Promise<ThreadListResponse>;
    /**
     * @param {ModelListParams} [params]
     * @returns {Promise<ModelListResponse>}
     */
    modelList(params?: ModelListParams): Promise<ModelListResponse>;
    /**
     * Shuts the daemon down (closing its stdin) and returns its exit status.
     * @returns {Promise<number | null>}
     */
    close(): Promise<number | null>;
}
/** A loaded thread; `info` is what the daemon returned. */
export class Thread {
    /**
     * @param {OpenturnClient} client
     * @param {ThreadInfo} info
     */
    constructor(client: OpenturnClient, info: ThreadInfo);
    client: OpenturnClient;
    info: import("../types/protocol.js").Thread;
    id: string;
    queue: import("./connection.js").AsyncQueue<import("../types/protocol.js").ServerNotification>;
    /**
     * `turn/start`.
     * @param {Input} input
     * @param {Omit<TurnStartParams, "threadId" | "input">} [params]
     * @returns {Promise<Turn>}
     */
    startTurn(input: Input, params?: Omit<TurnStartParams, "threadId" | "input">): Promise<Turn>;
    /**
     * Starts a turn and waits for it to end.
     * @param {Input} input
     * @param {Omit<TurnStartParams, "threadId" | "input">} [params]
     * @returns {Promise<TurnResult>}
     */
    run(input: Input, params?: Omit<TurnStartParams, "threadId" | "input">): Promise<TurnResult>;
    /** @returns {Promise<ThreadReadResponse>} */
    read(): Promise<ThreadReadResponse>;
}
/**
 * How a turn ended: the final turn (`status`, `error`), every item completed during it, and the
 * text of its last agent message (`null` if it wrote none).
 * @typedef {object} TurnResult
 * @property {TurnInfo} turn
 * @property {TurnInfo["status"]} status
 * @property {ThreadItem[]} items
 * @property {string | null} finalText
 */
/**
 * A running turn. `for await (const n of turn)` yields its notifications in order
 * (`item/agentMessage/delta` and the other deltas included) and stops after `turn/completed`.
 * Iterate once; `wait()` consumes whatever is left.
 */
export class Turn {
    /**
     * @param {Thread} thread
     * @param {TurnInfo} info
     */
    constructor(thread: Thread, info: TurnInfo);
    thread: Thread;
    id: string;
    info: import("../types/protocol.js").Turn;
    /** @type {TurnResult | null} */
    result: TurnResult | null;
    /** @type {ThreadItem[]} */
    items: ThreadItem[];
    /** @type {string | null} */
    finalText: string | null;
    /** @param {ServerNotification} notification */
    observe(notification: ServerNotification): void;
    /**
     * Consumes the rest of the turn and returns how it ended.
     * @returns {Promise<TurnResult>}
     */
    wait(): Promise<TurnResult>;
    /**
     * `turn/steer`: adds input to this turn while it runs.
     * @param {Input} input
     * @returns {Promise<void>}
     */
    steer(input: Input): Promise<void>;
    /**
     * `turn/interrupt`: the turn ends soon with status `interrupted`.
     * @returns {Promise<void>}
     */
    interrupt(): Promise<void>;
    /** @returns {AsyncGenerator<ServerNotification, void, undefined>} */
    [Symbol.asyncIterator](): AsyncGenerator<ServerNotification, void, undefined>;
}
export type ServerNotification = import("../types/protocol.js").ServerNotification;
export type InitializeResponse = import("../types/protocol.js").InitializeResponse;
export type ThreadStartParams = import("../types/protocol.js").ThreadStartParams;
export type ThreadResumeParams = import("../types/protocol.js").ThreadResumeParams;
export type ThreadReadParams = import("../types/protocol.js").ThreadReadParams;
export type ThreadReadResponse = import("../types/protocol.js").ThreadReadResponse;
export type ThreadListParams = import("../types/protocol.js").ThreadListParams;
export type ThreadListResponse = import("../types/protocol.js").ThreadListResponse;
export type ModelListParams = import("../types/protocol.js").ModelListParams;
export type ModelListResponse = import("../types/protocol.js").ModelListResponse;
export type ThreadStartResponse = import("../types/protocol.js").ThreadStartResponse;
export type TurnStartParams = import("../types/protocol.js").TurnStartParams;
export type TurnStartResponse = import("../types/protocol.js").TurnStartResponse;
export type ThreadInfo = import("../types/protocol.js").Thread;
export type TurnInfo = import("../types/protocol.js").Turn;
export type ThreadItem = import("../types/protocol.js").ThreadItem;
export type UserInput = import("../types/protocol.js").UserInput;
export type SpawnOptions = import("./connection.js").SpawnOptions;
export type Input = string | UserInput[];
export type StartOptions = SpawnOptions & {
    clientName?: string;
    clientVersion?: string;
};
/**
 * How a turn ended: the final turn (`status`, `error`), every item completed during it, and the
 * text of its last agent message (`null` if it wrote none).
 */
export type TurnResult = {
    turn: TurnInfo;
    status: TurnInfo["status"];
    items: ThreadItem[];
    finalText: string | null;
};
import { Connection } from "./connection.js";
