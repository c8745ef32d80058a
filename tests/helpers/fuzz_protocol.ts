/**
 * The fuzz's client side (tests/helpers/fuzz_run.ts): the protocol version a world's server is
 * spoken to in, tool calls made as tasks, and the requests that are no tool call ("moves":
 * resources, prompts, completions, the `tasks/*` methods, the log level).
 *
 * A world's server is spoken to in one of three versions: 2025-06-18 (no tasks: a call that
 * asks for one is answered plainly), 2025-11-25 (a call asks to run as a task with
 * `params.task`, then the client waits on `tasks/result`), or 2026-07-28 (no handshake, every
 * request carries its version and capabilities; the tasks extension declared, so a call that
 * waits past the server's grace is answered with a task handle, polled with `tasks/get`). A
 * task may be cancelled a moment after it began. However a call ran, what it ended with is
 * judged as a plain call's answer is, but for a task the fuzz cancelled itself, which may end
 * without a result.
 *
 * A move may be refused (a URI that names nothing, a task id never made): a refusal is a
 * JSON-RPC error a person can read, never a bare internal error. A move may subscribe to a
 * resource (2025: `resources/subscribe`; 2026-07-28: a `subscriptions/listen` stream, held a
 * moment and cancelled): every update the server sends must be of a URI subscribed to, and
 * under 2026-07-28 of one the stream was granted, after its acknowledgement. What else the
 * server sends unasked is held too ({@link FuzzClient.notificationProblems}): progress only
 * for a token a call gave and only while that call runs, a task's status only under 2025-11-25
 * and only of a task made, log messages without raw control characters.
 *
 * @module
 */

import { callBoundMs, TASK_LIMITS } from "../../src/mcp/tasks.ts";
import type { FuzzCall, Json } from "./fuzz_args.ts";
import { RAW_CONTROL, unreadable } from "./robust.ts";
import type { RpcMessage, StdioServer } from "./stdio.ts";

/** The protocol versions the fuzz speaks to a world's server in. */
export const PROTOCOLS = ["2025-06-18", "2025-11-25", "2026-07-28"] as const;
export type Protocol = typeof PROTOCOLS[number];

/** The requests that are no tool call, which the fuzz also makes (a move's `tool`). */
export const MOVES = [
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "resources/list",
  "resources/templates/list",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "tasks/get",
  "tasks/list",
  "tasks/cancel",
  "tasks/result",
  "logging/setLevel",
  "subscriptions/listen",
] as const;

/** Whether `call` is a move (its `tool` a method), not a tool call. */
export function isMove(call: FuzzCall): boolean {
  return call.tool.includes("/");
}

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The `_meta` every 2026-07-28 request carries: the tasks extension declared. */
const MODERN = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "tmux-mcp-fuzz", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
};

/** How one call or move ended. */
export type Ending =
  /** An answer to judge: a tool result (however the call ran) or a move's answer. */
  | { readonly kind: "answer"; readonly reply: RpcMessage; readonly how: string }
  /** A task the fuzz cancelled ended without a result, as a cancelled task may. */
  | { readonly kind: "cancelled"; readonly how: string }
  /** What the protocol promises did not happen (a listen stream never acknowledged). */
  | { readonly kind: "broken"; readonly why: string };

/** The ids of the requests that ran a call (the first is what a hang cancels) and its end. */
export interface Running {
  readonly id: number;
  readonly ended: Promise<Ending>;
}

/** The notification that acknowledges a listen stream, and how long it may take. */
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
const LISTEN_ACK_MS = 10_000;

/** The listen stream a 2026-07-28 notification belongs to. */
function subscriptionOf(n: RpcMessage): unknown {
  return (n.params?._meta as Json | undefined)?.["io.modelcontextprotocol/subscriptionId"];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a tasks/get answer (2026-07-28) or a task handle holds. */
interface TaskView {
  readonly taskId?: string;
  readonly status?: string;
  readonly result?: Json;
  readonly error?: { code: number; message: string };
  /** 2025-11-25: the task's lifetime, as the server granted it. */
  readonly ttl?: number;
  readonly createdAt?: string;
}

/** A world's server, spoken to in one protocol version. */
export class FuzzClient {
  readonly #server: StdioServer;
  readonly protocol: Protocol;
  /** Every URI a subscription was asked for (whatever the answer): updates may name these. */
  readonly #subscribed = new Set<string>();
  /** Task ids the server handed out, for later moves to name. */
  readonly taskIds: string[] = [];
  /** How many notifications were looked at already. */
  #seen = 0;
  /**
   * Each progress token given, and the requests whose answer ends its call (the call's own;
   * for a 2025-11-25 task, tasks/result's and an acknowledged tasks/cancel's): no progress
   * may come after any of them.
   */
  readonly #tokens = new Map<string, number[]>();
  /** What each 2026-07-28 listen stream was granted, by subscription id. */
  readonly #granted = new Map<unknown, Set<unknown>>();
  #nextToken = 1;

  constructor(server: StdioServer, protocol: Protocol) {
    this.#server = server;
    this.protocol = protocol;
  }

  get #modern(): boolean {
    return this.protocol === "2026-07-28";
  }

  /** The handshake (2025-*), or a `server/discover` (2026-07-28): the server is up. */
  async open(): Promise<RpcMessage> {
    if (this.#modern) return await this.request("server/discover");
    const answer = await this.#server.request("initialize", {
      protocolVersion: this.protocol,
      capabilities: {},
      clientInfo: { name: "tmux-mcp-fuzz", version: "1" },
    });
    await this.#server.notify("notifications/initialized");
    return answer;
  }

  /** Sends a request as this version says (2026-07-28: with its `_meta`). */
  send(method: string, params: Json = {}): { id: number; answer: Promise<RpcMessage> } {
    if (!this.#modern) return this.#server.send(method, params);
    const meta = params._meta !== null && typeof params._meta === "object"
      ? { ...params._meta, ...MODERN }
      : MODERN;
    return this.#server.send(method, { ...params, _meta: meta });
  }

  request(method: string, params: Json = {}): Promise<RpcMessage> {
    return this.send(method, params).answer;
  }

  /** Runs one tool call (as a task when it says so and the version has them) or one move. */
  run(call: FuzzCall): Running {
    if (call.tool === "subscriptions/listen") return this.#listen(call);
    if (isMove(call)) {
      if (call.tool === "resources/subscribe" && typeof call.arguments.uri === "string") {
        this.#subscribed.add(call.arguments.uri);
      }
      const sent = this.send(call.tool, call.arguments);
      return {
        id: sent.id,
        ended: sent.answer.then((reply) => {
          this.#learnTasks(reply);
          return { kind: "answer", reply, how: "" };
        }),
      };
    }
    const params: Json = { name: call.tool, arguments: call.arguments };
    if (call.task && !this.#modern) params.task = call.task.ttl === undefined ? {} : call.task;
    const ends: number[] = [];
    if (call.progress) {
      const progressToken = `fuzz-${this.#nextToken++}`;
      this.#tokens.set(progressToken, ends);
      params._meta = { progressToken };
    }
    const sent = this.send("tools/call", params);
    return {
      id: sent.id,
      ended: sent.answer.then((reply) => this.#follow(call, reply, sent.id, ends)),
    };
  }

  /**
   * 2026-07-28: a listen stream, acknowledged (or refused), held a moment, then cancelled (it
   * is never answered then). Every URI it asked for may be named by an update.
   */
  #listen(call: FuzzCall): Running {
    const asked = (call.arguments.notifications as Json | undefined)?.resourceSubscriptions;
    if (Array.isArray(asked)) { for (const uri of asked) this.#subscribed.add(String(uri)); }
    const sent = this.send(call.tool, call.arguments);
    let answered = false;
    sent.answer.then(() => answered = true, () => answered = true);
    const acknowledged = async (): Promise<"acknowledged" | "late" | "answered"> => {
      const began = Date.now();
      const all = this.#server.notifications;
      for (let i = this.#seen;; i++) {
        while (i >= all.length) {
          if (answered) return "answered";
          if (Date.now() - began > LISTEN_ACK_MS) return "late";
          await sleep(10);
        }
        const n = all[i];
        if (n.method === ACKNOWLEDGED && subscriptionOf(n) === sent.id) return "acknowledged";
      }
    };
    const ended = Promise.race([
      sent.answer.then((reply): Ending => ({ kind: "answer", reply, how: "" })),
      acknowledged().then(async (seen): Promise<Ending> => {
        if (seen === "answered") return await new Promise<Ending>(() => {}); // the answer wins
        if (seen === "late") {
          return { kind: "broken", why: `no acknowledgement within ${LISTEN_ACK_MS} ms` };
        }
        await sleep(call.holdMs ?? 0);
        await this.#server.notify("notifications/cancelled", { requestId: sent.id });
        return { kind: "cancelled", how: `listen stream held ${call.holdMs ?? 0} ms` };
      }),
    ]);
    return { id: sent.id, ended };
  }

  /**
   * A tool call's first answer, followed to its end when it is a task; `ends` gets the ids of
   * the requests whose answers end its progress.
   */
  async #follow(call: FuzzCall, reply: RpcMessage, id: number, ends: number[]): Promise<Ending> {
    const result = reply.result as Json | undefined;
    const handle = result?.task as TaskView | undefined;
    if (!this.#modern && handle !== undefined && call.task !== undefined) {
      // 2025-11-25: progress goes on, related to the task, until it ends.
      return await this.#awaitLegacy(call, handle, ends);
    }
    ends.push(id);
    if (this.#modern && result?.resultType === "task") {
      return await this.#pollModern(call, result as TaskView);
    }
    return { kind: "answer", reply, how: "" };
  }

  /** 2025-11-25: maybe a cancel a moment in, then `tasks/result` (which waits for the end). */
  async #awaitLegacy(call: FuzzCall, handle: TaskView, ends: number[]): Promise<Ending> {
    const taskId = String(handle.taskId);
    this.taskIds.push(taskId);
    // The ttl granted covers the call's own wait and a little more, whatever ttl was asked.
    const covers = Math.min(
      TASK_LIMITS.maxTtlMs,
      callBoundMs(call.tool, call.arguments) + TASK_LIMITS.keptPastBoundMs,
    );
    if (typeof handle.ttl !== "number" || handle.ttl < covers) {
      return {
        kind: "broken",
        why: `task granted ttl ${handle.ttl}, short of its wait (${covers})`,
      };
    }
    let cancelled = false;
    if (call.task?.cancelAfterMs !== undefined) {
      await sleep(call.task.cancelAfterMs);
      const cancel = this.send("tasks/cancel", { taskId });
      cancelled = (await cancel.answer).error === undefined;
      if (cancelled) ends.push(cancel.id);
    }
    const result = this.send("tasks/result", { taskId });
    ends.push(result.id);
    const reply = await result.answer;
    const how = `task ${cancelled ? "cancelled" : "run"}`;
    // A task cancelled before it finished has no result to give: tasks/result says so. So has
    // one whose ttl passed while it waited: only a call that ran well past its own timeout,
    // and never before the ttl, counted from the task's creation, has truly passed.
    if (cancelled && reply.error && /has no result/.test(reply.error.message)) {
      return { kind: "cancelled", how: `${how}: ${reply.error.message}` };
    }
    if (reply.error && /has no result: Its ttl passed/.test(reply.error.message)) {
      const lived = Date.now() - Date.parse(String(handle.createdAt));
      if (!(lived >= handle.ttl)) {
        return {
          kind: "broken",
          why: `task expired after ${lived} ms of its ${handle.ttl} ms ttl`,
        };
      }
      return { kind: "cancelled", how: `task expired (ttl ${handle.ttl} ms), its call late` };
    }
    return { kind: "answer", reply, how };
  }

  /** 2026-07-28: tasks/get until the task ends (maybe a cancel a moment in). */
  async #pollModern(call: FuzzCall, handle: TaskView): Promise<Ending> {
    const taskId = String(handle.taskId);
    this.taskIds.push(taskId);
    const began = Date.now();
    let cancelled = false;
    for (;;) {
      const cancelAt = call.task?.cancelAfterMs;
      if (!cancelled && cancelAt !== undefined && Date.now() - began >= cancelAt) {
        const ack = await this.request("tasks/cancel", { taskId });
        if (ack.error) return { kind: "answer", reply: ack, how: "tasks/cancel" };
        cancelled = true;
      }
      const got = await this.request("tasks/get", { taskId });
      const view = got.result as TaskView | undefined;
      if (!view) return { kind: "answer", reply: got, how: "tasks/get" };
      if (view.status === "working") {
        await sleep(100);
        continue;
      }
      const how = `task ${view.status}`;
      if (view.status === "completed" && view.result) {
        return { kind: "answer", reply: { jsonrpc: "2.0", result: view.result }, how };
      }
      if (view.status === "failed" && view.error) {
        return { kind: "answer", reply: { jsonrpc: "2.0", error: view.error }, how };
      }
      if (view.status === "cancelled" && cancelled) return { kind: "cancelled", how };
      return {
        kind: "answer",
        reply: { jsonrpc: "2.0", error: { code: 0, message: `task ${JSON.stringify(view)}` } },
        how: `${how}, unlooked for`,
      };
    }
  }

  #learnTasks(reply: RpcMessage): void {
    const tasks = (reply.result as Json | undefined)?.tasks;
    if (!Array.isArray(tasks)) return;
    for (const t of tasks) if (typeof t?.taskId === "string") this.taskIds.push(t.taskId);
  }

  /**
   * What is wrong with the notifications that came since the last look, or null: an update of
   * a resource nobody subscribed to; progress for a token never given, or after its call was
   * answered (or its task ended or was cancelled); a task's status where the version has no
   * tasks, or of a task never made; a log message with raw control characters (a pane's text
   * it quotes must not drive the terminal a log is read on).
   */
  notificationProblems(): string | null {
    const all = this.#server.notifications;
    const from = this.#seen;
    this.#seen = all.length;
    for (let i = from; i < all.length; i++) {
      const n = all[i];
      const p = n.params ?? {};
      switch (n.method) {
        case ACKNOWLEDGED: {
          const granted = (p.notifications as Json | undefined)?.resourceSubscriptions;
          this.#granted.set(subscriptionOf(n), new Set(Array.isArray(granted) ? granted : []));
          break;
        }
        case "notifications/resources/updated": {
          if (!this.#subscribed.has(String(p.uri))) {
            return `an update of ${p.uri}, never subscribed to`;
          }
          const stream = subscriptionOf(n);
          if (stream === undefined) break;
          const granted = this.#granted.get(stream);
          if (!granted) return `an update of ${p.uri} before stream ${stream} was acknowledged`;
          if (!granted.has(String(p.uri))) {
            return `an update of ${p.uri} to stream ${stream}, which was not granted it`;
          }
          break;
        }
        case "notifications/progress": {
          const token = String(p.progressToken);
          const ends = this.#tokens.get(token);
          if (!ends) return `progress for token ${JSON.stringify(p.progressToken)}, never given`;
          const ended = ends.find((id) => (this.#server.answeredAt.get(id) ?? Infinity) <= i);
          if (ended !== undefined) {
            return `progress for ${token} after the answer to request ${ended} ended its call: ` +
              JSON.stringify(p).slice(0, 300);
          }
          break;
        }
        case "notifications/tasks/status":
          if (this.protocol !== "2025-11-25") {
            return `a task's status under ${this.protocol}, which has no such notification`;
          }
          if (!this.taskIds.includes(String(p.taskId))) {
            return `the status of task ${JSON.stringify(p.taskId)}, never made`;
          }
          break;
        case "notifications/message":
          if (typeof p.data === "string" && RAW_CONTROL.test(p.data)) {
            return `a log message with raw control characters: ${
              JSON.stringify(p.data).slice(0, 300)
            }`;
          }
          break;
      }
    }
    return null;
  }
}

/**
 * Why a move's JSON-RPC error is no fine refusal, or null when it is: a readable message that
 * says what was wrong (with the request, or with tmux: a prompt that reads tmux may fail as an
 * internal error with its reason), never a bare "Internal error" (an exception the server did
 * not expect).
 */
export function badMoveError(
  error: { code: number; message: string },
  params: Json,
): string | null {
  if (/internal error/i.test(error.message)) return "an internal error";
  // A message may quote what it was sent, the word "undefined" among it.
  const quoted = JSON.stringify(params).includes("undefined");
  return unreadable(quoted ? error.message.replaceAll("undefined", "") : error.message);
}
