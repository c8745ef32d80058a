/**
 * The tasks of each connection: how a `tools/call` becomes a task (2025-11-25: the client
 * asks; 2026-07-28: the server decides after the grace), a task's lifecycle (created, run with
 * its own signal, settled, cancelled, expired, forgotten), and the answers to the `tasks/*`
 * methods under each protocol version. What tasks are offered and their bounds: tasks.ts.
 *
 * @module
 */

import {
  CLIENT_CAPABILITIES_META_KEY,
  type McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { clip, failureText, KEEPS_RUNNING, ToolFailure } from "./errors.ts";
import type { Era } from "./resources.ts";
import {
  firstText,
  legacyView,
  modernView,
  type Outcome,
  rpcError,
  short,
  type TaskRecord,
} from "./task_record.ts";
import { callBoundMs, grantedTtlMs, TASK_LIMITS, TASK_TOOLS, TASKS_EXTENSION } from "./tasks.ts";
import { type Handler, wrapSdkHandler } from "./tool_list.ts";

/**
 * The abort reasons of cancelled tasks ({@link TaskStore.#stop}), each with what takes a late
 * word for its task: the call behind a task sees its cancellation only through its signal,
 * which (the registry's follows the task's) aborts with the task's reason.
 */
const lateWords = new WeakMap<object, (text: string) => void>();

/**
 * Tells the task cancelled under `signal` (none: nothing happens) what its call did all the
 * same, which becomes the task's status message (what tasks/get shows, and what 2025-11-25's
 * tasks/result answers): `word`, a failure of the call flagged `typed` (errors.ts: its command
 * was typed, or may have been), or the text of what a call that succeeded did. A failure not
 * so flagged changes nothing. Called by the tool before it returns, as its answer (a plain
 * tool result) no longer carries the flag.
 */
export function tellCancelledTask(signal: AbortSignal, word: unknown): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (typeof reason !== "object" || reason === null) return;
  const hear = lateWords.get(reason);
  if (hear === undefined) return;
  if (typeof word === "string") hear(word);
  else if (word instanceof ToolFailure && word.typed) hear(failureText(word, {}));
}

/** The tasks of every connection of one registry; what stdio shutdown cancels. */
export class ToolTasks {
  readonly #stores = new Set<TaskStore>();

  /** Tasks still running, over every connection. */
  get running(): number {
    let n = 0;
    for (const store of this.#stores) n += store.running;
    return n;
  }

  /**
   * Declares tasks on `server` for its protocol era, answers the `tasks/*` methods, and
   * returns what runs a `tools/call` (as a task or not). Call before the server connects.
   */
  attach(server: McpServer, era: Era): TaskCalls {
    const store = new TaskStore(server, era);
    this.#stores.add(store);
    const previous = server.server.onclose;
    server.server.onclose = () => {
      this.#stores.delete(store);
      store.cancelAll("the connection closed");
      previous?.();
    };
    return store;
  }

  /** Cancels every task of every connection (the client went away). */
  cancelAll(reason: string): void {
    for (const store of this.#stores) store.cancelAll(reason);
  }
}

/** Runs one `tools/call` request: `original` is the SDK's handler, which a plain call takes. */
export interface TaskCalls {
  call(request: Record<string, unknown>, ctx: unknown, original: Handler): Promise<unknown>;
}

/** A request context as the SDK hands it to a handler (the parts used here). */
interface Ctx {
  mcpReq: {
    signal: AbortSignal;
    notify: (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>;
    envelope?: Record<string, unknown>;
  };
}

const paramsWithId = z.looseObject({ taskId: z.string() });

/** One connection's tasks. */
class TaskStore implements TaskCalls {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #server: McpServer;
  readonly #era: Era;
  /** 2025: whether the negotiated version has tasks (2025-11-25 and later). */
  #spoken = true;

  constructor(server: McpServer, era: Era) {
    this.#server = server;
    this.#era = era;
    if (era === "legacy") this.#attachLegacy();
    else this.#attachModern();
  }

  get running(): number {
    let n = 0;
    for (const task of this.#tasks.values()) if (task.status === "working") n++;
    return n;
  }

  #attachLegacy(): void {
    const sdk = this.#server.server;
    sdk.registerCapabilities({
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    } as never);
    // Tasks came with 2025-11-25: an older client is told of none, and its calls run plainly.
    wrapSdkHandler(this.#server, "initialize", (initialize) => async (request, extra) => {
      const answer = await initialize(request, extra) as {
        protocolVersion: string;
        capabilities: Record<string, unknown>;
      };
      this.#spoken = answer.protocolVersion >= "2025-11-25";
      if (!this.#spoken) {
        const { tasks: _, ...capabilities } = answer.capabilities;
        return { ...answer, capabilities };
      }
      return answer;
    });
    const on = (method: string, params: z.ZodType, handler: (p: never, ctx: Ctx) => unknown) =>
      (sdk.setRequestHandler as (m: string, s: unknown, h: unknown) => void)(
        method,
        { params },
        handler,
      );
    on("tasks/get", paramsWithId, (p: { taskId: string }) => legacyView(this.#find(p.taskId)));
    on("tasks/result", paramsWithId, (p: { taskId: string }, ctx) => this.#result(p.taskId, ctx));
    on("tasks/list", z.looseObject({ cursor: z.string().optional() }), (p: { cursor?: string }) => {
      if (p.cursor !== undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          "No such cursor: tasks/list " +
            "answers every task in one page, without a cursor.",
        );
      }
      return { tasks: [...this.#tasks.values()].map(legacyView) };
    });
    on("tasks/cancel", paramsWithId, (p: { taskId: string }) => legacyView(this.#cancel(p.taskId)));
  }

  #attachModern(): void {
    const sdk = this.#server.server;
    sdk.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } } as never);
    const on = (method: string, params: z.ZodType, handler: (p: never, ctx: Ctx) => unknown) =>
      (sdk.setRequestHandler as (m: string, s: unknown, h: unknown) => void)(
        method,
        { params },
        (p: never, ctx: Ctx) => {
          if (!declaresTasks(ctx)) {
            throw new MissingRequiredClientCapabilityError({
              requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
            });
          }
          return handler(p, ctx);
        },
      );
    on("tasks/get", paramsWithId, (p: { taskId: string }) => modernView(this.#find(p.taskId)));
    on("tasks/cancel", paramsWithId, (p: { taskId: string }) => {
      const task = this.#find(p.taskId);
      if (task.status === "working") this.#cancel(p.taskId);
      return {};
    });
    on(
      "tasks/update",
      // The SDK lifts inputResponses off the params (ctx.mcpReq.inputResponses).
      paramsWithId,
      (p: { taskId: string }) => {
        this.#find(p.taskId); // no task of ours asks for input: responses are ignored
        return {};
      },
    );
  }

  call(request: Record<string, unknown>, ctx: unknown, original: Handler): Promise<unknown> {
    const params = request.params as Record<string, unknown>;
    const name = params.name as string;
    if (this.#era === "modern") return this.#callModern(request, ctx as Ctx, original, name);
    if (params.task === undefined || !this.#spoken) return original(request, ctx);
    if (!TASK_TOOLS.has(name)) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `${name} does not run as a task (its execution.taskSupport is "forbidden"): call it ` +
            "without params.task.",
        ),
      );
    }
    const ttl = z.looseObject({ ttl: z.number().nonnegative().optional() }).safeParse(
      params.task,
    );
    if (!ttl.success) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          "params.task must be {ttl?: milliseconds to keep the task}.",
        ),
      );
    }
    // A request cancelled before its answer is sent is not answered (the SDK drops the
    // answer), so its client never learns of the task: then no task is made, or the one made
    // stops (nothing typed if it had not begun). Once the answer is sent the SDK aborts the
    // request's signal no more, but for the connection's end, which cancels every task anyway.
    const signal = (ctx as Ctx).mcpReq.signal;
    if (signal.aborted) return Promise.reject(cancelledEarly());
    const task = this.#create(grantedTtlMs(ttl.data.ttl, callBoundMs(name, params.arguments)));
    if (!task) return Promise.reject(tooMany());
    signal.addEventListener("abort", () => {
      if (task.status === "working") this.#stop(task, "Cancelled: its request was cancelled.");
    }, { once: true });
    const { task: _, ...plain } = params;
    this.#run(task, { ...request, params: plain }, ctx as Ctx, original, () => true);
    return Promise.resolve({ task: legacyView(task) });
  }

  /** 2026-07-28: the server decides; a call still running after the grace becomes a task. */
  async #callModern(
    request: Record<string, unknown>,
    ctx: Ctx,
    original: Handler,
    name: string,
  ): Promise<unknown> {
    if (!TASK_TOOLS.has(name) || !declaresTasks(ctx) || this.running >= TASK_LIMITS.maxRunning) {
      return original(request, ctx);
    }
    const task = this.#create(
      grantedTtlMs(
        undefined,
        callBoundMs(name, (request.params as Record<string, unknown>).arguments),
      ),
    )!;
    // Until the handle is given, the request is the task: cancelling it cancels the work.
    const follow = () => task.controller.abort(ctx.mcpReq.signal.reason);
    ctx.mcpReq.signal.addEventListener("abort", follow, { once: true });
    // A signal aborted already fires no more "abort" events.
    if (ctx.mcpReq.signal.aborted) follow();
    let handed = false;
    this.#run(task, request, ctx, original, () => !handed);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graced = new Promise<"grace">((resolve) => {
      timer = setTimeout(() => resolve("grace"), TASK_LIMITS.graceMs);
    });
    const first = await Promise.race([task.ended.promise.then(() => "ended" as const), graced]);
    clearTimeout(timer);
    ctx.mcpReq.signal.removeEventListener("abort", follow);
    if (first === "ended") {
      // Answered as a plain call: no task was ever shown.
      this.#forget(task);
      const outcome = task.outcome;
      if (outcome && "error" in outcome) {
        throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
      }
      if (!outcome) throw new ProtocolError(ProtocolErrorCode.InternalError, "Cancelled.");
      return outcome.result;
    }
    handed = true;
    const { result: _r, error: _e, ...handle } = modernView(task);
    return { ...handle, resultType: "task" };
  }

  /** A new task kept `ttlMs`, or undefined when {@link TASK_LIMITS}.maxRunning are running. */
  #create(ttlMs: number): TaskRecord | undefined {
    if (this.running >= TASK_LIMITS.maxRunning) return undefined;
    while (this.#tasks.size >= TASK_LIMITS.maxKept) {
      const oldest = [...this.#tasks.values()].find((t) => t.status !== "working");
      if (!oldest) return undefined;
      this.#forget(oldest);
    }
    const now = Date.now();
    const taskId = crypto.randomUUID();
    const timer = setTimeout(() => this.#expire(taskId), ttlMs);
    Deno.unrefTimer(timer as unknown as number);
    const task: TaskRecord = {
      taskId,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      controller: new AbortController(),
      ended: Promise.withResolvers<void>(),
      wound: Promise.withResolvers<void>(),
      timer,
    };
    this.#tasks.set(taskId, task);
    return task;
  }

  /**
   * Runs the call behind `task` through the SDK's own handler, with the task's signal; its
   * progress goes out while `progressLive()` says so, and its message becomes the status.
   */
  #run(
    task: TaskRecord,
    request: Record<string, unknown>,
    ctx: Ctx,
    original: Handler,
    progressLive: () => boolean,
  ): void {
    const notify = (n: { method: string; params?: Record<string, unknown> }) => {
      if (n.method === "notifications/progress" && typeof n.params?.message === "string") {
        task.statusMessage = short(n.params.message);
      }
      if (!progressLive() || task.status !== "working") return Promise.resolve();
      if (this.#era === "modern") return ctx.mcpReq.notify(n);
      const meta = {
        ...(n.params?._meta as object),
        [RELATED_TASK_META_KEY]: { taskId: task.taskId },
      };
      return this.#notify({ ...n, params: { ...n.params, _meta: meta } });
    };
    const taskCtx = {
      ...ctx,
      mcpReq: { ...ctx.mcpReq, signal: task.controller.signal, notify },
    };
    Promise.resolve()
      .then(() => {
        // The request was cancelled before its work began, so before its answer was sent: no
        // client knows the task. Nothing is typed or waited for.
        if (ctx.mcpReq.signal.aborted && task.status === "working") {
          this.#stop(task, "Cancelled: its request was cancelled.");
        }
        return task.status === "working" ? original(request, taskCtx) : null;
      })
      .then(
        (result) =>
          result === null
            ? task.wound.resolve()
            : this.#settle(task, { result: result as Record<string, unknown> }),
        (error) => this.#settle(task, { error: rpcError(error) }),
      );
  }

  #settle(task: TaskRecord, outcome: Outcome): void {
    task.wound.resolve();
    if (task.status === "cancelled") {
      this.#lateWord(task, outcome);
      return;
    }
    if (task.status !== "working") return;
    task.outcome = outcome;
    if ("error" in outcome) {
      task.status = "failed";
      task.statusMessage = short(outcome.error.message);
    } else if (outcome.result.isError === true) {
      // 2025-11-25: a tool error fails the task; 2026-07-28: it is a completed call.
      task.status = this.#era === "legacy" ? "failed" : "completed";
      task.statusMessage = short(firstText(outcome.result));
    } else {
      task.status = "completed";
      task.statusMessage = undefined;
    }
    this.#changed(task);
  }

  /**
   * A cancelled task stays cancelled, as both protocol versions require, but the call behind
   * it may have started what a cancel does not stop: run_command's command, once typed, keeps
   * running in the pane, and the call's answer says so and names the job. That answer becomes
   * the task's status message (what tasks/get shows, and what 2025-11-25's tasks/result
   * answers), so the model learns which job still holds the pane rather than taking it for
   * stopped (get_command_result's answer says its job runs on alike). A call that completed
   * all the same says what it did. run_command tells its failures once its command was typed
   * (or may have been) itself, flagged on the error ({@link tellCancelledTask}); any other late
   * failure changes nothing.
   */
  #lateWord(task: TaskRecord, outcome: Outcome): void {
    // Told already by the call itself ({@link tellCancelledTask}).
    if (this.#told.has(task)) return;
    if (!("result" in outcome)) return;
    const text = firstText(outcome.result);
    if (outcome.result.isError !== true) {
      // It did its work after all: the cancel came too late to stop it.
      this.#hear(task, `Cancelled by tasks/cancel, too late: the call had completed. ${text}`);
      return;
    }
    if (!text.includes(KEEPS_RUNNING)) return;
    this.#hear(task, text);
  }

  /** The cancelled tasks whose call told what it did ({@link tellCancelledTask}). */
  readonly #told = new WeakSet<TaskRecord>();

  /** Makes `text` the cancelled task's status message. */
  #hear(task: TaskRecord, text: string): void {
    task.statusMessage = short(text);
    task.lastUpdatedAt = Date.now();
  }

  #changed(task: TaskRecord): void {
    task.lastUpdatedAt = Date.now();
    task.ended.resolve();
    if (this.#era === "legacy" && this.#spoken) {
      this.#notify({ method: "notifications/tasks/status", params: legacyView(task) });
    }
  }

  #notify(n: { method: string; params?: Record<string, unknown> }): Promise<void> {
    if (!this.#server.isConnected()) return Promise.resolve();
    return (this.#server.server.notification as (n: unknown) => Promise<void>)(n)
      .catch(() => {
        // A client that went away cannot be told.
      });
  }

  #find(taskId: string): TaskRecord {
    const task = this.#tasks.get(taskId);
    if (!task) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Failed to retrieve task: no task ${JSON.stringify(clip(taskId, 80))} (never made ` +
          "here, or forgotten after its ttl).",
      );
    }
    return task;
  }

  #cancel(taskId: string): TaskRecord {
    const task = this.#find(taskId);
    if (task.status !== "working") {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${task.status}'.`,
      );
    }
    this.#stop(task, "Cancelled by tasks/cancel.");
    return task;
  }

  /** Ends a running task as cancelled and aborts its work. */
  #stop(task: TaskRecord, why: string): void {
    task.status = "cancelled";
    task.statusMessage = why;
    const reason = new Error(why);
    lateWords.set(reason, (text) => {
      if (task.status !== "cancelled") return;
      this.#told.add(task);
      this.#hear(task, text);
    });
    task.controller.abort(reason);
    this.#changed(task);
  }

  /**
   * 2025-11-25 `tasks/result`: waits for the end, then answers what the call would have. A
   * cancelled task's answer waits for its call to wind down too (a moment, once aborted), so
   * that it says what the call left running (see {@link TaskStore.#lateWord}).
   */
  async #result(taskId: string, ctx: Ctx): Promise<unknown> {
    const task = this.#find(taskId);
    if (task.status === "working" || task.status === "cancelled") {
      const gaveUp = Promise.withResolvers<void>();
      const onAbort = () => gaveUp.resolve();
      ctx.mcpReq.signal.addEventListener("abort", onAbort, { once: true });
      await Promise.race([task.ended.promise, gaveUp.promise]);
      if (task.status === "cancelled") await Promise.race([task.wound.promise, gaveUp.promise]);
      ctx.mcpReq.signal.removeEventListener("abort", onAbort);
    }
    const outcome = task.outcome;
    if (outcome && "result" in outcome) {
      const meta = outcome.result._meta as Record<string, unknown> | undefined;
      return {
        ...outcome.result,
        _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
      };
    }
    if (outcome) {
      throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${task.taskId} has no result: ${task.statusMessage ?? "it did not finish."}`,
    );
  }

  /** Past its ttl a task is forgotten, and stopped first if it still runs. */
  #expire(taskId: string): void {
    const task = this.#tasks.get(taskId);
    if (!task) return;
    if (task.status === "working") this.#stop(task, "Its ttl passed before it finished.");
    this.#forget(task);
  }

  #forget(task: TaskRecord): void {
    clearTimeout(task.timer);
    this.#tasks.delete(task.taskId);
    task.ended.resolve();
    task.wound.resolve();
  }

  cancelAll(reason: string): void {
    for (const task of [...this.#tasks.values()]) {
      if (task.status === "working") this.#stop(task, `Cancelled: ${reason}.`);
      this.#forget(task);
    }
  }
}

/** Whether a 2026-07-28 request declares the tasks extension in its capabilities. */
function declaresTasks(ctx: Ctx): boolean {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

/** What a request cancelled before it began is answered with; the SDK sends no answer to it. */
function cancelledEarly(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidRequest,
    "The request was cancelled before it began: nothing was run.",
  );
}

function tooMany(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `${TASK_LIMITS.maxRunning} tasks are running already: wait for one to end (tasks/get), ` +
      "cancel one (tasks/cancel), or call without params.task.",
  );
}
