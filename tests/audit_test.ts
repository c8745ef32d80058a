/**
 * The audit trail: every call that changes something is told as a log message of logger
 * `audit` (level info) with the tool, its ids and its outcome — never the text typed or the
 * command run, which appear only at debug, to the client alone — and, with `--audit`, as one
 * line on stderr.
 */

import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { auditReason, targetsOf } from "../src/mcp/audit.ts";
import { withTmux } from "./helpers/mcp.ts";
import { MODERN_META, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

Deno.test("targets: ids from the arguments and the result, names quoted and cut", () => {
  assert.deepEqual(
    targetsOf(
      { paneId: "%3", text: "secret", session: 'my "work"', socket_name: "s" },
      { windowId: "@4", paneId: "%3", output: "%9" },
    ),
    ["%3", 'session="my \\"work\\""', 'socket="s"', "@4"],
  );
  assert.deepEqual(targetsOf({ name: "x".repeat(100) }), [`name="${"x".repeat(63)}…"`]);
  assert.deepEqual(targetsOf(["%1"]), []);
  assert.equal(
    auditReason('Pane %1 is still running "sleep \\"30\\"" (job 1).\nWait.'),
    'Pane %1 is still running "…" (job 1).',
  );
});

Deno.test("targets and reasons are cut between characters, never inside a surrogate pair", () => {
  const emoji = "\u{1F600}"; // two UTF-16 code units
  // The pair's halves sit at units 62 and 63 of a name, 298 and 299 of a reason.
  const [name] = targetsOf({ name: "n".repeat(62) + emoji + "n".repeat(10) });
  assert.ok(name.isWellFormed(), name);
  assert.equal(name, `name="${"n".repeat(62)}…"`);
  const reason = auditReason("r".repeat(298) + emoji + "r".repeat(10));
  assert.ok(reason.isWellFormed(), reason);
  assert.equal(reason, `${"r".repeat(298)}…`);
});

Deno.test("changes are audited at info without their text; reads are not audited", async () => {
  await withTmux(async (t, c) => {
    const messages: { level: string; logger?: string; data: unknown }[] = [];
    c.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n: { params: unknown }) => {
        messages.push(n.params as { level: string; logger?: string; data: unknown });
      },
    );
    await c.client.setLoggingLevel("debug");
    const p = t.ids.paneId;
    await c.ok("list_panes", {});
    await c.ok("send_keys", { paneId: p, text: "echo SECRET-TEXT", enter: true });
    await c.ok("run_command", { paneId: p, command: "echo SECRET-CMD" });
    await c.fail("send_keys", { paneId: "%999", text: "SECRET-GONE" });
    await c.fail("send_keys", { paneId: p, bogus: 1 });
    await c.ok("call_tools_batch", {
      operations: [
        { tool: "rename_window", arguments: { windowId: t.ids.windowId, name: "w 1" } },
        { tool: "list_windows", arguments: {} },
      ],
    });
    const audit = () => messages.filter((m) => m.logger === "audit");
    await waitFor(() => audit().filter((m) => m.level === "info").length >= 5, "audit lines");
    const info = audit().filter((m) => m.level === "info").map((m) => String(m.data));
    assert.deepEqual(
      info,
      [
        `send_keys ${p}: ok`,
        `run_command ${p}: ok`,
        `send_keys %999: failed: No pane %999 on socket "${t.socket}". Panes: ${p} — ` +
        "list_panes lists them all.",
        `send_keys ${p}: failed: Invalid arguments for send_keys: unknown field bogus ` +
        "(fields: paneId, text, keys, enter, force, socket_name)",
        `rename_window ${t.ids.windowId} name="w 1": ok`,
      ].map((line) => line.replace(`socket "${t.socket}"`, 'socket "…"')),
    );
    for (const line of info) assert.ok(!line.includes("SECRET"), line);
    assert.ok(!info.some((l) => l.startsWith("list_") || l.startsWith("call_tools_batch")));
    const debug = audit().filter((m) => m.level === "debug").map((m) => String(m.data));
    assert.ok(debug.some((l) => l.includes("SECRET-TEXT")));
    assert.ok(debug.some((l) => l.includes("SECRET-CMD")));
    // A client that asks for warnings and worse hears no audit.
    await c.client.setLoggingLevel("warning");
    const before = audit().length;
    await c.ok("send_keys", { paneId: p, text: "x" });
    await c.ok("list_panes", {});
    assert.equal(audit().length, before);
  });
});

Deno.test("--audit writes one line per change on stderr; without it, none", async () => {
  const t = await TestTmux.start();
  const { cmd, args } = startCommand();
  try {
    for (const audit of [true, false]) {
      const s = new StdioServer(
        cmd,
        [...args, "--socket", t.socket, ...(audit ? ["--audit"] : [])],
        cleanEnv(),
      );
      try {
        await s.initialize();
        await s.callTool("send_keys", { paneId: t.ids.paneId, text: "SECRET-STDERR" });
        await s.callTool("list_panes", {});
      } finally {
        await s.closeStdin();
      }
      const lines = s.stderr.split("\n").filter((l) => l.startsWith("tmux-mcp: audit: "));
      assert.deepEqual(lines, audit ? [`tmux-mcp: audit: send_keys ${t.ids.paneId}: ok`] : []);
      assert.ok(!s.stderr.includes("SECRET"), s.stderr);
      if (audit) assert.match(s.stderr, /audit on stderr/);
    }
  } finally {
    await t.kill();
  }
});

/** The log messages `server` was sent so far. */
function logMessages(server: StdioServer) {
  return server.notifications
    .filter((n) => n.method === "notifications/message")
    .map((n) => n.params as { level: string; logger?: string; data: unknown });
}

Deno.test("a client that never set a log level is not sent typed text and secrets at debug", async () => {
  const t = await TestTmux.start("main");
  const { cmd, args } = startCommand();
  try {
    for (const protocolVersion of ["2025-06-18", "2025-11-25"]) {
      const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
      try {
        await server.request("initialize", {
          protocolVersion,
          capabilities: {},
          clientInfo: { name: "a client that never calls logging/setLevel", version: "1" },
        });
        await server.notify("notifications/initialized");
        await server.callTool("set_environment", { name: "API_TOKEN", value: "sk-SECRET-VALUE" });
        await server.callTool("send_keys", { paneId: t.ids.paneId, text: "PW=SECRET-TYPED" });
        await server.callTool("list_panes", {}); // answered after both audits were sent
        // The audit's info lines come (the README's trail); its debug lines must not, unasked.
        assert.ok(logMessages(server).some((m) => m.logger === "audit" && m.level === "info"));
        const leaked = logMessages(server).filter((m) => String(m.data).includes("SECRET"));
        assert.deepEqual(
          leaked,
          [],
          `${protocolVersion}: arguments sent to a client that never asked`,
        );
        // Asked for debug, the client gets the arguments.
        assert.deepEqual((await server.request("logging/setLevel", { level: "debug" })).result, {});
        await server.callTool("send_keys", { paneId: t.ids.paneId, text: "PW=SECRET-ASKED" });
        await server.callTool("list_panes", {});
        assert.ok(
          logMessages(server).some((m) => m.level === "debug" && String(m.data).includes("ASKED")),
          `${protocolVersion}: debug asked for and not sent`,
        );
        await server.endsCleanly();
      } finally {
        await server.kill();
      }
    }
    // 2026-07-28 carries the level in each request's _meta: without debug there, no arguments.
    const server = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    try {
      for (const level of [undefined, "info", "warning"]) {
        const _meta = level === undefined
          ? MODERN_META
          : { ...MODERN_META, "io.modelcontextprotocol/logLevel": level };
        const answer = await server.request("tools/call", {
          name: "send_keys",
          arguments: { paneId: t.ids.paneId, text: "PW=SECRET-MODERN" },
          _meta,
        });
        assert.equal(answer.result?.isError, undefined, JSON.stringify(answer));
      }
      const leaked = logMessages(server).filter((m) => String(m.data).includes("SECRET"));
      assert.deepEqual(leaked, [], "2026-07-28: arguments sent without debug asked for");
      await server.endsCleanly();
    } finally {
      await server.kill();
    }
  } finally {
    await t.kill();
  }
});

Deno.test("a log line shows every control, line separator and bidi control as an escape, on stderr and to the client", async () => {
  const t = await TestTmux.start("main");
  const { cmd, args } = startCommand();
  // C1's CSI (U+009B) drives a terminal as ESC [ does; NEL (U+0085) and U+2028 break a line;
  // U+202E turns what follows around. JSON.stringify leaves each of them raw.
  const name = "a\u009b2Jb\u0085c\u2028d\u202ee\u001b[31mf\tg";
  const raw =
    // deno-lint-ignore no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const server = new StdioServer(cmd, [...args, "--socket", t.socket, "--audit"], cleanEnv());
  try {
    await server.initialize();
    assert.deepEqual((await server.request("logging/setLevel", { level: "debug" })).result, {});
    const refused = await server.callTool("rename_session", { session: "main", name });
    assert.equal(refused.isError, true);
    await server.callTool("list_panes", {}); // answered after the audit was sent
    const sent = logMessages(server).filter((m) => m.logger === "audit").map((m) => String(m.data));
    assert.equal(sent.length, 2, JSON.stringify(sent));
    for (const line of sent) assert.doesNotMatch(line, raw, JSON.stringify(line));
    // JSON.stringify (the quoting of a name) escapes ESC and tab itself; the rest, the log line.
    const quoted = String.raw`name="a\x9B2Jb\x85c\u2028d\u202ee\u001b[31mf\tg": failed`;
    assert.ok(sent[0].startsWith(`rename_session session="main" ${quoted}`), sent[0]);
    await server.endsCleanly();
    const lines = server.stderr.split("\n").filter((l) => l.startsWith("tmux-mcp: audit: "));
    assert.equal(lines.length, 1, server.stderr);
    assert.doesNotMatch(lines[0], raw, JSON.stringify(lines[0]));
    assert.equal(lines[0], `tmux-mcp: audit: ${sent[0]}`);
  } finally {
    await server.kill();
    await t.kill();
  }
});
