// Threads and turns on top of a Connection: OpenturnClient spawns and initializes the daemon,
// Thread starts turns on one thread, Turn is an async iterator over that turn's notifications
// (deltas included) that ends after `turn/completed`, with steer and interrupt while it runs.

import { Connection } from "./connection.js";
import { OpenturnError } from "./errors.js";

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

export const CLIENT_NAME = "openturn-client-node";
export const CLIENT_VERSION = "0.1.0";

/** One `openturn app-server` process and the session with it. */
export class OpenturnClient {
  /**
   * Spawns the daemon and performs the `initialize` handshake.
   * @param {StartOptions} [options]
   * @returns {Promise<OpenturnClient>}
   */
  static async start(options = {}) {
    const connection = await Connection.spawn(options);
    try {
      const info = await connection.initialize(
        options.clientName ?? CLIENT_NAME,
        options.clientVersion ?? CLIENT_VERSION,
      );
      return new OpenturnClient(connection, info);
    } catch (error) {
      await connection.close();
      throw error;
    }
  }

  /**
   * @param {Connection} connection
   * @param {InitializeResponse} serverInfo
   */
  constructor(connection, serverInfo) {
    this.connection = connection;
    this.serverInfo = serverInfo;
  }

  /**
   * Any method by name (for methods without a helper).
   * @param {string} method
   * @param {unknown} [params]
   * @returns {Promise<any>}
   */
  request(method, params) {
    return this.connection.request(method, params);
  }

  /**
   * `thread/start`.
   * @param {ThreadStartParams} [params]
   * @returns {Promise<Thread>}
   */
  async threadStart(params = {}) {
    /** @type {ThreadStartResponse} */
    const result = await this.request("thread/start", params);
    return new Thread(this, result.thread);
  }

  /**
   * `thread/resume`: loads a stored thread so turns can run on it again.
   * @param {string} threadId
   * @param {Omit<ThreadResumeParams, "threadId">} [params]
   * @returns {Promise<Thread>}
   */
  async threadResume(threadId, params = {}) {
    /** @type {ThreadStartResponse} */
    const result = await this.request("thread/resume", { ...params, threadId });
    return new Thread(this, result.thread);
  }

  /**
   * `thread/read`: a stored thread, with its turns when `includeTurns` is true.
   * @param {string} threadId
   * @param {Omit<ThreadReadParams, "threadId">} [params]
   * @returns {Promise<ThreadReadResponse>}
   */
  threadRead(threadId, params = {}) {
    return this.request("thread/read", { ...params, threadId });
  }

  /**
   * `thread/list`: one page of stored threads.
   * @param {ThreadListParams} [params]
   * @returns {Promise<ThreadListResponse>}
   */
  threadList(params = {}) {
    return this.request("thread/list", params);
  }

  /**
   * @param {ModelListParams} [params]
   * @returns {Promise<ModelListResponse>}
   */
  modelList(params = {}) {
    return this.request("model/list", params);
  }

  /**
   * Shuts the daemon down (closing its stdin) and returns its exit status.
   * @returns {Promise<number | null>}
   */
  close() {
    return this.connection.close();
  }
}

/** A loaded thread; `info` is what the daemon returned. */
export class Thread {
  /**
   * @param {OpenturnClient} client
   * @param {ThreadInfo} info
   */
  constructor(client, info) {
    this.client = client;
    this.info = info;
    this.id = info.id;
    // Subscribe now: notifications of a turn may arrive before its response.
    this.queue = client.connection.subscribe(this.id);
  }

  /**
   * `turn/start`.
   * @param {Input} input
   * @param {Omit<TurnStartParams, "threadId" | "input">} [params]
   * @returns {Promise<Turn>}
   */
  async startTurn(input, params = {}) {
    /** @type {TurnStartResponse} */
    const result = await this.client.request("turn/start", { ...params, threadId: this.id, input: toInput(input) });
    return new Turn(this, result.turn);
  }

  /**
   * Starts a turn and waits for it to end.
   * @param {Input} input
   * @param {Omit<TurnStartParams, "threadId" | "input">} [params]
   * @returns {Promise<TurnResult>}
   */
  async run(input, params = {}) {
    const turn = await this.startTurn(input, params);
    return turn.wait();
  }

  /** @returns {Promise<ThreadReadResponse>} */
  read() {
    return this.client.threadRead(this.id, { includeTurns: true });
  }
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
  constructor(thread, info) {
    this.thread = thread;
    this.id = info.id;
    this.info = info;
    /** @type {TurnResult | null} */
    this.result = null;
    /** @type {ThreadItem[]} */
    this.items = [];
    /** @type {string | null} */
    this.finalText = null;
  }

  /** @returns {AsyncGenerator<ServerNotification, void, undefined>} */
  async *[Symbol.asyncIterator]() {
    while (this.result === null) {
      const notification = await this.thread.queue.next();
      const turnId = turnIdOf(notification);
      if (turnId !== null && turnId !== this.id) continue; // left over from an earlier turn
      this.observe(notification);
      yield notification;
    }
  }

  /** @param {ServerNotification} notification */
  observe(notification) {
    if (notification.method === "item/completed") {
      const item = notification.params.item;
      this.items.push(item);
      if (item.type === "agentMessage") this.finalText = item.text;
    } else if (notification.method === "turn/completed" && notification.params.turn.id === this.id) {
      const turn = notification.params.turn;
      this.info = turn;
      this.result = { turn, status: turn.status, items: this.items, finalText: this.finalText };
    }
  }

  /**
   * Consumes the rest of the turn and returns how it ended.
   * @returns {Promise<TurnResult>}
   */
  async wait() {
    for await (const _ of this) {
      // Draining: the result is gathered as notifications pass.
    }
    if (this.result === null) throw new OpenturnError(`turn ${this.id} ended without turn/completed`);
    return this.result;
  }

  /**
   * `turn/steer`: adds input to this turn while it runs.
   * @param {Input} input
   * @returns {Promise<void>}
   */
  async steer(input) {
    await this.thread.client.request("turn/steer", {
      threadId: this.thread.id,
      expectedTurnId: this.id,
      input: toInput(input),
    });
  }

  /**
   * `turn/interrupt`: the turn ends soon with status `interrupted`.
   * @returns {Promise<void>}
   */
  async interrupt() {
    await this.thread.client.request("turn/interrupt", { threadId: this.thread.id, turnId: this.id });
  }
}

/**
 * @param {Input} input
 * @returns {UserInput[]}
 */
function toInput(input) {
  return typeof input === "string" ? [{ type: "text", text: input }] : input;
}

/**
 * @param {ServerNotification} notification
 * @returns {string | null}
 */
function turnIdOf(notification) {
  /** @type {any} */
  const params = notification.params;
  if (typeof params.turnId === "string") return params.turnId;
  if (params.turn && typeof params.turn.id === "string") return params.turn.id;
  return null;
}
