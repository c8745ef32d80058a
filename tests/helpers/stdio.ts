/**
 * Drives the real server process over stdio, as an MCP client would: newline-delimited
 * JSON-RPC, started with exactly the flags of the `start` task in deno.json (the flags the
 * compiled binary bakes in), or any other command (a compiled binary).
 *
 * @module
 */

import denoJson from "../../deno.json" with { type: "json" };
import assert from "node:assert/strict";
import {
  cleanEnv,
  sh,
  type TestTmux,
  TestTmux as TestTmuxServer,
  trackChild,
  waitFor,
} from "./tmux.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The `start` task as argv, with `deno` resolved to the running executable. */
export function startCommand(): { cmd: string; args: string[] } {
  const words = denoJson.tasks.start.split(/\s+/);
  if (words[0] !== "deno") throw new Error("the start task must begin with deno");
  return {
    cmd: Deno.execPath(),
    args: words.slice(1).map((w) => w === "main.ts" ? `${ROOT}main.ts` : w),
  };
}

/** The `_meta` every 2026-07-28 request carries in place of a handshake. */
export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "tmux-mcp-tests", version: "raw" },
  "io.modelcontextprotocol/clientCapabilities": {},
} as const;

/** A JSON-RPC message as it comes back. */
export interface RpcMessage {
  readonly jsonrpc: "2.0";
  readonly id?: number | string | null;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
  readonly method?: string;
  readonly params?: Record<string, unknown>;
}

/** A running server process. */
export class StdioServer {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<
    number | string,
    { resolve: (m: RpcMessage) => void; reject: (e: Error) => void }
  >();
  readonly notifications: RpcMessage[] = [];
  /**
   * For each request answered, how many notifications had come before its answer: what came
   * after it, in the order the server wrote them, is `notifications.slice(answeredAt.get(id))`.
   */
  readonly answeredAt = new Map<number | string, number>();
  stderr = "";
  /** Settles once the process's stderr has ended and {@link stderr} holds all of it. */
  readonly stderrEnded: Promise<void>;
  #nextId = 1;
  readonly #reading: Promise<void>;

  /**
   * Starts `cmd args` with `env` as its whole environment, in the checkout unless `cwd` says
   * otherwise (started elsewhere, the `start` task's command needs `--config`: see
   * `fromSourceArgs` in src/cli.ts).
   */
  constructor(cmd: string, args: string[], env: Record<string, string>, cwd: string = ROOT) {
    this.child = new Deno.Command(cmd, {
      args,
      env,
      clearEnv: true,
      cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    trackChild(this.child, `the MCP server process ${cmd} ${args.join(" ")}`.slice(0, 300));
    this.#writer = this.child.stdin.getWriter();
    // Once stdout ends (the process gone) no answer can come: a request waiting for one fails,
    // with the process's stderr, instead of holding its test for good.
    this.#reading = this.#read().finally(() => this.#orphaned());
    this.stderrEnded = this.#readStderr(this.child.stderr).catch(() => {});
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) this.stderr += chunk;
  }

  async #read(): Promise<void> {
    let buffer = "";
    for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === "") continue;
        const message = JSON.parse(line) as RpcMessage;
        if (message.id !== undefined && message.id !== null && this.#pending.has(message.id)) {
          this.answeredAt.set(message.id, this.notifications.length);
          this.#pending.get(message.id)!.resolve(message);
          this.#pending.delete(message.id);
        } else {
          this.notifications.push(message);
        }
      }
    }
  }

  /** Fails every request still waiting for an answer: the process's stdout has ended. */
  async #orphaned(): Promise<void> {
    if (this.#pending.size === 0) return;
    await this.stderrEnded;
    for (const [id, { reject }] of this.#pending) {
      reject(
        new Error(
          `no answer to request ${id}: the server's stdout ended; its stderr:\n${this.stderr}`,
        ),
      );
    }
    this.#pending.clear();
  }

  /** Writes one raw line (for malformed-input tests). */
  async writeLine(line: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(`${line}\n`));
  }

  /** Sends a request and waits for its answer. */
  request(method: string, params: Record<string, unknown> = {}): Promise<RpcMessage> {
    return this.send(method, params).answer;
  }

  /**
   * Sends a request; its id (for `notifications/cancelled`) and its answer, which fails if the
   * request could not be written (the process gone).
   */
  send(
    method: string,
    params: Record<string, unknown> = {},
  ): { id: number; answer: Promise<RpcMessage> } {
    const id = this.#nextId++;
    const written = this.writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const answer = new Promise<RpcMessage>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      written.catch(reject);
    });
    // A test that never reads the answer (the process killed on purpose) is not failed by it.
    answer.catch(() => {});
    return { id, answer };
  }

  /** Sends a notification. */
  notify(method: string, params: Record<string, unknown> = {}): Promise<void> {
    return this.writeLine(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /** initialize + initialized. */
  async initialize(): Promise<RpcMessage> {
    const answer = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "tmux-mcp-tests", version: "1" },
    });
    await this.notify("notifications/initialized");
    return answer;
  }

  /** Calls a tool; returns the result object. */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const answer = await this.request("tools/call", { name, arguments: args });
    if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
    return answer.result!;
  }

  /** Closes stdin (the client going away) and waits for the process to end. */
  async closeStdin(): Promise<Deno.CommandStatus> {
    await this.#writer.close().catch(() => {});
    const status = await this.child.status;
    await this.#reading.catch(() => {});
    // Whatever it wrote to stderr is all in `stderr` once this returns.
    await this.stderrEnded;
    return status;
  }

  /** Closes stdin and checks the process then exits with status 0 (its stderr says why not). */
  async endsCleanly(): Promise<void> {
    const status = await this.closeStdin();
    assert.equal(status.code, 0, `exit status ${status.code}; its stderr:\n${this.stderr}`);
  }

  /**
   * Ends the process the way a client or a person would (stdin closed, or a signal: SIGHUP is
   * what it gets when the terminal its client runs in is closed) and waits until it has exited.
   */
  async end(how: "stdin EOF" | "SIGTERM" | "SIGINT" | "SIGHUP" | "SIGQUIT"): Promise<void> {
    if (how === "stdin EOF") await this.closeStdin();
    else this.child.kill(how);
    await this.child.status;
  }

  /** `answer`, or "no answer" after `ms`, or "exited" when the process ended first. */
  async answerWithin(
    answer: Promise<RpcMessage>,
    ms: number,
  ): Promise<RpcMessage | "no answer" | "exited"> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        answer,
        this.child.status.then(() => "exited" as const),
        new Promise<"no answer">((resolve) => timer = setTimeout(() => resolve("no answer"), ms)),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the process if it still runs. */
  async kill(): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await this.child.status;
    await this.#writer.close().catch(() => {});
  }
}

/** The real server process on the tmux server at `socket` (with `extra` flags), initialized. */
export async function startOn(
  socket: string,
  extra: readonly string[] = [],
): Promise<StdioServer> {
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", socket, ...extra], cleanEnv());
  await s.initialize();
  return s;
}

/** A tool call over stdio: whether it failed, its text's first line, the text, its data. */
export async function callOver(
  s: StdioServer,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; summary: string; text: string; data: Record<string, unknown> }> {
  const r = await s.callTool(name, args);
  const text = (r.content as { text: string }[])[0].text;
  return {
    isError: r.isError === true,
    summary: text.split("\n")[0],
    text,
    data: (r.structuredContent ?? {}) as Record<string, unknown>,
  };
}

/** The pids of the tmux clients attached to `t` that `s` started (its control clients). */
export async function clientsOf(t: TestTmux, s: StdioServer): Promise<string[]> {
  const children = (await sh("ps", ["-o", "pid=", "--ppid", String(s.child.pid)], {
    allowFail: true,
  })).stdout.split("\n").map((l) => l.trim()).filter(Boolean);
  return (await t.tmux("list-clients", "-F", "#{client_pid}")).split("\n")
    .filter((pid) => children.includes(pid));
}

/**
 * Kills `s` outright, with its control clients' own `tmux -C` processes (as a kill of its
 * process group does), and waits until tmux no longer lists those clients.
 *
 * The `tmux -C` processes go too because tmux (3.3a) keeps a control client for good whose
 * process dies while tmux still holds output for it (see "a SIGKILLed process's control client
 * stays listed..." in left_behind_test.ts, and the minute-old rule that covers it): that
 * moment, which a loaded machine makes likelier, is not what these tests are about.
 */
export async function kill9(t: TestTmux, s: StdioServer): Promise<void> {
  const clients = await clientsOf(t, s);
  assert.ok(clients.length > 0, "the process had a control client");
  await s.kill();
  for (const pid of clients) {
    try {
      Deno.kill(Number(pid), "SIGKILL");
    } catch {
      // ended with its process already
    }
  }
  await waitFor(
    async () =>
      !(await t.tmux("list-clients", "-F", "#{client_pid}")).split("\n")
        .some((pid) => clients.includes(pid)),
    "the killed process's control clients to be gone",
  );
}

/**
 * A server process (over stdio, `--socket`) on a private tmux server whose first pane runs bash
 * at its prompt; the process must end cleanly once `body` is done.
 */
export async function withBashServer(
  body: (t: BashTmux, s: StdioServer) => Promise<void>,
): Promise<void> {
  const t = await TestTmuxServer.start("main", { command: "bash --norc --noprofile" });
  const { cmd, args } = startCommand();
  const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
  try {
    await t.prompt(t.ids.paneId);
    await body(t, s);
    await s.endsCleanly();
  } finally {
    await s.kill();
    await t.kill();
  }
}

/** The tmux server {@link withBashServer} gives. */
export type BashTmux = Awaited<ReturnType<typeof TestTmuxServer.start>>;
