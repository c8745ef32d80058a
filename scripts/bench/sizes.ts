/**
 * The per-size section: for each size of server, what each tool call costs beside the same work
 * done with the plain tmux command line, and what its replies and the server's memory come to.
 *
 * @module
 */

import { StdioServer } from "../../tests/helpers/stdio.ts";
import { execOverControl } from "../../src/tmux/control.ts";
import { TmuxRunner } from "../../src/tmux/run.ts";
import { RUNS, SIZES, WARMUP } from "./options.ts";
import { buildServer, dispose, SCROLLBACK, tmux } from "./fixture.ts";
import { benchHook } from "./hook.ts";
import {
  bundleIdleRss,
  call,
  cmd,
  env,
  LONG_IDLE_MS,
  peakRss,
  readyIdleRss,
  startArgs,
} from "./server.ts";
import { out, record } from "./table.ts";
import { sideBySide, time } from "./timing.ts";

/** The server's memory at each size: idle once ready (from source and bundle) and at peak. */
export const memory: {
  size: number;
  idleRssMb: number;
  bundleIdleRssMb: number | null;
  /** The bundle's server left idle {@link LONG_IDLE_MS} (the first size only). */
  bundleLongIdleRssMb: number | null;
  peakRssMb: number;
}[] = [];

/**
 * What a reply costs a model's context: its text block (what a client shows the model), its
 * structured content, and the whole result as JSON on the wire.
 */
export const replies: {
  size: number;
  call: string;
  textChars: number;
  structuredBytes: number;
  wireBytes: number;
}[] = [];

/** Runs of wait_for_idle (each lasts quietMs and more: a handful). */
const IDLE_RUNS = 7;

/**
 * The figures of one size: a server of `size` panes built, then each tool's call beside the
 * same work with the tmux command line, wake-ups, replies' sizes and the server's memory; cold
 * start, the hook and wait_for_idle's overshoot are timing, not size, so only at the first size.
 */
export async function benchSize(size: number): Promise<void> {
  const sizeStart = performance.now();
  const fx = await buildServer(size);
  out(
    `${String(size).padStart(5)}  (server with ${size} panes built in ${
      ((performance.now() - sizeStart) / 1000).toFixed(1)
    } s)`,
  );
  const floorFields =
    "#{pane_id}\t#{window_id}\t#{pane_index}\t#{pane_active}\t#{pane_current_command}\t#{pane_current_path}\t#{pane_title}\t#{pane_dead}\t#{pane_width}\t#{pane_height}\t#{session_id}\t#{session_name}\t#{window_index}\t#{window_name}";
  try {
    // Cold start: spawn to initialize answered, and to tools/list answered.
    const initTimes: number[] = [];
    const listTimes: number[] = [];
    for (let i = 0; i < (size === SIZES[0] ? RUNS : 0); i++) {
      const t0 = performance.now();
      const s = new StdioServer(cmd, [...startArgs, "--socket", fx.socket], env);
      await s.initialize();
      initTimes.push(performance.now() - t0);
      await s.request("tools/list");
      listTimes.push(performance.now() - t0);
      await s.closeStdin();
    }
    if (initTimes.length) {
      record(size, "cold start → initialize", initTimes, null);
      record(size, "cold start → tools/list", listTimes, null);
    }

    if (size === SIZES[0]) await benchHook(size, fx);

    const server = new StdioServer(cmd, [...startArgs, "--socket", fx.socket], env);
    await server.initialize();
    const idleRssMb = await readyIdleRss(server);
    const bundleRss = await bundleIdleRss(fx.socket, size === SIZES[0]);
    const target = fx.panes[Math.floor(fx.panes.length / 2)];

    record(
      size,
      "list_panes (whole server)",
      ...(await sideBySide(
        () => call(server, "list_panes", {}),
        () => tmux(fx.socket, "list-panes", "-a", "-F", floorFields),
      )),
    );
    // What tmux itself takes for the same fields, asked over a connection already open (no
    // process started, the answer not even parsed): the floor under any server asking for them.
    const direct = new TmuxRunner();
    try {
      record(
        size,
        "tmux itself: the same list-panes over an open connection",
        ...(await sideBySide(
          async () => {
            const args = ["list-panes", "-a", "-F", floorFields];
            const answer = await execOverControl(direct, { socketName: fx.socket }, args);
            if (answer?.code !== 0) throw new Error("list-panes over a control connection failed");
          },
          () => tmux(fx.socket, "list-panes", "-a", "-F", floorFields),
        )),
      );
    } finally {
      await direct.close();
    }
    record(
      size,
      "list_panes (one session, up to 40 panes)",
      ...(await sideBySide(
        () => call(server, "list_panes", { session: "bench0" }),
        () => tmux(fx.socket, "list-panes", "-s", "-t", "=bench0", "-F", floorFields),
      )),
    );
    record(
      size,
      "get_pane_info",
      ...(await sideBySide(
        () => call(server, "get_pane_info", { paneId: target }),
        () => tmux(fx.socket, "display-message", "-p", "-t", target, floorFields),
      )),
    );
    // A tool acting on one pane or window reads only it: its cost should not grow with the
    // server (before, each read every pane, ~80 ms at 1 000 panes).
    const targetWindow =
      (await tmux(fx.socket, "display-message", "-p", "-t", target, "#{window_id}"))
        .trim();
    record(
      size,
      "set_pane_title (one pane, read before and after)",
      ...(await sideBySide(
        (i) => call(server, "set_pane_title", { paneId: target, title: `bench ${i}` }),
        (i) => tmux(fx.socket, "select-pane", "-t", target, "-T", `bench ${i}`),
      )),
    );
    record(
      size,
      "get_window_info",
      ...(await sideBySide(
        () => call(server, "get_window_info", { windowId: targetWindow }),
        () => tmux(fx.socket, "list-panes", "-t", targetWindow, "-F", floorFields),
      )),
    );
    record(
      size,
      "capture_pane (last 200 lines)",
      ...(await sideBySide(
        () => call(server, "capture_pane", { paneId: target, start: -200, maxLines: 200 }),
        () => tmux(fx.socket, "capture-pane", "-p", "-t", target, "-S", "-200"),
      )),
    );
    // tmux refuses a command line over about 16 KB: chain at most 200 captures per process.
    const captureChains = async (extra: string[]) => {
      for (let at = 0; at < fx.panes.length; at += 200) {
        const chunk = fx.panes.slice(at, at + 200);
        await tmux(
          fx.socket,
          ...chunk.flatMap((
            p,
            i,
          ) => [...(i ? [";"] : []), "capture-pane", "-p", "-t", p, ...extra]),
        );
      }
    };
    record(
      size,
      "search_panes (visible screen)",
      ...(await sideBySide(
        () => call(server, "search_panes", { pattern: "NEEDLE-PRESENT" }),
        () => captureChains([]),
      )),
    );
    record(
      size,
      `search_panes (+${SCROLLBACK} scrollback)`,
      ...(await sideBySide(
        () =>
          call(server, "search_panes", { pattern: "NEEDLE-PRESENT", scrollbackLines: SCROLLBACK }),
        () => captureChains(["-S", `-${SCROLLBACK}`]),
      )),
    );
    record(
      size,
      "send_keys (literal text)",
      ...(await sideBySide(
        () => call(server, "send_keys", { paneId: fx.workPane, text: "x", enter: false }),
        () => tmux(fx.socket, "send-keys", "-t", fx.workPane, "-l", "x"),
      )),
    );
    await tmux(fx.socket, "send-keys", "-t", fx.workPane, "C-u");

    // wait_for_text: the time from the text reaching the pane to the answer arriving. The
    // text is written straight to the pane's terminal, so its moment is known exactly.
    const wake: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      const word = `WAKE-${size}-${i + WARMUP}-${crypto.randomUUID().slice(0, 6)}`;
      const token = `wake-${word}`;
      const pending = server.request("tools/call", {
        name: "wait_for_text",
        arguments: { paneId: fx.workPane, patterns: [word], timeoutMs: 10_000 },
        _meta: { progressToken: token },
      });
      // The first progress notification says the wait is watching: only then write.
      const until = performance.now() + 10_000;
      while (
        !server.notifications.some((n) => n.params?.progressToken === token) &&
        performance.now() < until
      ) await new Promise((r) => setTimeout(r, 1));
      const t0 = performance.now();
      await Deno.writeTextFile(fx.workTty, `${word}\r\n`);
      const answer = await pending;
      const t1 = performance.now();
      const outcome = (answer.result?.structuredContent as { outcome?: string })?.outcome;
      if (outcome !== "matched") throw new Error(`wait_for_text: ${JSON.stringify(answer.result)}`);
      if (i >= 0) wake.push(t1 - t0);
    }
    record(size, "wait_for_text wake after text", wake, null);

    // wait_for_idle: how long after quietMs of silence the answer arrives. The pane prints
    // once (written straight to its terminal, so the moment is known), then stays quiet; the
    // overshoot is the time from that write to the answer, less quietMs. Timing, not size:
    // measured once, at the first size.
    if (size === SIZES[0]) {
      const quietMs = 500;
      const overshoot: number[] = [];
      for (let i = -WARMUP; i < IDLE_RUNS; i++) {
        const token = `idle-${size}-${i + WARMUP}-${crypto.randomUUID().slice(0, 6)}`;
        const pending = server.request("tools/call", {
          name: "wait_for_idle",
          arguments: { paneId: fx.workPane, quietMs, timeoutMs: 10_000 },
          _meta: { progressToken: token },
        });
        const until = performance.now() + 10_000;
        while (
          !server.notifications.some((n) => n.params?.progressToken === token) &&
          performance.now() < until
        ) await new Promise((r) => setTimeout(r, 1));
        const t0 = performance.now();
        await Deno.writeTextFile(fx.workTty, `idle ${token}\r\n`);
        const answer = await pending;
        const t1 = performance.now();
        const outcome = (answer.result?.structuredContent as { outcome?: string })?.outcome;
        if (outcome !== "idle") throw new Error(`wait_for_idle: ${JSON.stringify(answer.result)}`);
        if (i >= 0) overshoot.push(t1 - t0 - quietMs);
      }
      record(size, "wait_for_idle overshoot beyond quietMs", overshoot, null);
    }

    record(
      size,
      "run_command `true`",
      // One block, then the other: the command line's way returns once `true` has run, while
      // its shell may still be finishing the line, which run_command would wait for.
      await time(() => call(server, "run_command", { paneId: fx.workPane, command: "true" })),
      await time(async (i) => {
        const channel = `bench-done-${i + 10}`;
        await tmux(
          fx.socket,
          "send-keys",
          "-t",
          fx.workPane,
          "-l",
          `true; tmux -L ${fx.socket} wait-for -S ${channel}`,
          ";",
          "send-keys",
          "-t",
          fx.workPane,
          "Enter",
        );
        await tmux(fx.socket, "wait-for", channel);
      }),
    );
    const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
    for (
      const [label, name, args] of [
        ["list_panes (whole server)", "list_panes", {}],
        ["list_windows (whole server)", "list_windows", {}],
        ["search_panes (visible screen)", "search_panes", { pattern: "NEEDLE-PRESENT" }],
        ["capture_pane (last 200 lines)", "capture_pane", {
          paneId: target,
          start: -200,
          maxLines: 200,
        }],
      ] as const
    ) {
      const r = await call(server, name, args);
      replies.push({
        size,
        call: label,
        textChars: r.content?.[0]?.text.length ?? 0,
        structuredBytes: bytes(r.structuredContent),
        wireBytes: bytes(r),
      });
      out(
        `${String(size).padStart(5)}  reply of ${label}: text ${replies.at(-1)!.textChars} ` +
          `chars, structured ${replies.at(-1)!.structuredBytes} B, whole ${
            replies.at(-1)!.wireBytes
          } B`,
      );
    }
    memory.push({
      size,
      idleRssMb,
      bundleIdleRssMb: bundleRss?.idle ?? null,
      bundleLongIdleRssMb: bundleRss?.longIdle ?? null,
      peakRssMb: peakRss(server.child.pid),
    });
    const bundleText = bundleRss
      ? `; the bundle ${bundleRss.idle.toFixed(1)} MB${
        bundleRss.longIdle === null
          ? ""
          : `, ${bundleRss.longIdle.toFixed(1)} MB after ${LONG_IDLE_MS / 1000} s idle`
      }`
      : "";
    out(
      `${String(size).padStart(5)}  server RSS idle once ready ${idleRssMb.toFixed(1)} MB, ` +
        `peak ${memory.at(-1)!.peakRssMb.toFixed(1)} MB${bundleText}`,
    );
    await server.closeStdin();
  } finally {
    await dispose(fx.socket);
  }
  out(
    `${String(size).padStart(5)}  (${
      ((performance.now() - sizeStart) / 1000).toFixed(1)
    } s for this size)`,
  );
}
