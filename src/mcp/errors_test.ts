import assert from "node:assert/strict";
import { TmuxError } from "../tmux/tmux_error.ts";
import { jsonStringBytes } from "./bounds.ts";
import {
  configuredPath,
  describeSocket,
  errorStart,
  failureText,
  MAX_FAILURE_BYTES,
  nameList,
  NoServer,
  noteServerMet,
  noteTmuxEnv,
  shownFailure,
  ToolFailure,
  visible,
} from "./errors.ts";

Deno.test("visible: controls as \\xNN, line separators and bidirectional controls as \\uXXXX", () => {
  // Tabs and newlines stay: an error text may hold lines of its own.
  assert.equal(visible("a\tb\nc"), "a\tb\nc");
  assert.equal(visible("\x1b[2J\x00\x7f\x9b\x85"), "\\x1B[2J\\x00\\x7F\\x9B\\x85");
  assert.equal(
    visible("a\u2028b\u2029c\u202ad\u202ee\u2066f\u2069g\u200eh\u200fi\u061cj"),
    "a\\u2028b\\u2029c\\u202ad\\u202ee\\u2066f\\u2069g\\u200eh\\u200fi\\u061cj",
  );
  // Other text stays as it is, however far from ASCII; what shows as nothing is spelled out.
  assert.equal(visible("日本語🙂 \u200b\u2060 ok"), "日本語🙂 \\u200b\\u2060 ok");
  // Applying it twice changes nothing more than once.
  const hostile = "x\u202e\x1b\u2028y";
  assert.equal(visible(hostile), "x\\u202e\\x1B\\u2028y");
  assert.equal(visible(visible(hostile)), visible(hostile));
});

Deno.test("failureText: a name tmux or the client holds cannot break the error's line or reorder it", () => {
  const socket = { socketName: "s" };
  const named = failureText(new ToolFailure('No session "a\u2028b\u202ec".', "Hint."), socket);
  assert.equal(named, 'No session "a\\u2028b\\u202ec". Hint.');
  const refused = failureText(
    new TmuxError("failed", "can't find session: x\u2029\u2067y"),
    socket,
  );
  assert.equal(refused, "tmux refused: can't find session: x\\u2029\\u2067y");
});

Deno.test("failureText: command too long says what grows a command, and blames no connection", () => {
  const text = failureText(new TmuxError("failed", "command too long"), { socketName: "s" });
  assert.match(text, /^tmux refused: command too long; nothing was done\./);
  assert.match(text, /a single quote growing by 3 bytes and a newline by 5/);
  assert.doesNotMatch(text, /control connection/);
});

/** An error text cut to fit: what it kept, and how many bytes it says went. */
function cutOf(text: string): { kept: string; cutBytes: number } {
  const m = /^([\s\S]*)… \((\d+) bytes cut\)/.exec(text);
  assert.ok(m, `the text says what it cut: ${text.slice(-100)}`);
  return { kept: m[1], cutBytes: Number(m[2]) };
}

Deno.test("failureText: a long error is cut within its bound, never inside an escape or a character", () => {
  const socket = { socketName: "s" };
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  // tmux echoes a refused value whole: each control character is four characters shown.
  const values: [string, RegExp][] = [
    ["\x01".repeat(60_000), /^(?:\\x01)*$/],
    ["🙂".repeat(30_000), /^(?:🙂)*$/],
    ['"\\'.repeat(40_000), /^["\\]*$/],
  ];
  for (const [value, shown] of values) {
    const whole = visible(`tmux refused: bad value: ${value}`);
    const text = failureText(new TmuxError("failed", `bad value: ${value}`), socket);
    assert.ok(jsonStringBytes(text) <= MAX_FAILURE_BYTES, `${jsonStringBytes(text)} bytes`);
    assert.ok(text.endsWith(" bytes cut)"), text.slice(-40));
    const { kept, cutBytes } = cutOf(text);
    assert.ok(whole.startsWith(kept), "the start is kept as it is");
    assert.ok(kept.isWellFormed(), "no half of a surrogate pair");
    assert.match(kept.slice("tmux refused: bad value: ".length), shown);
    assert.equal(bytes(kept) + cutBytes, bytes(whole), "kept and cut make the whole");
    assert.ok(jsonStringBytes(kept) > MAX_FAILURE_BYTES - 64, "it keeps what fits");
  }
  // A refusal keeps its hint, the call to make next, after what it cut of its reason.
  const refused = failureText(
    new ToolFailure(
      `No session "${"\x1b".repeat(20_000)}".`,
      "list_sessions lists them.",
    ),
    socket,
  );
  assert.ok(jsonStringBytes(refused) <= MAX_FAILURE_BYTES);
  assert.match(
    refused,
    /^No session "(?:\\x1B)+… \(\d+ bytes cut\) list_sessions lists them\.$/,
  );
  // Short ones are as they were, and the same text is not cut twice.
  assert.equal(failureText(new ToolFailure("No pane %9.", "Hint."), socket), "No pane %9. Hint.");
  const once = failureText(new TmuxError("failed", "\x01".repeat(60_000)), socket);
  assert.equal(failureText(new ToolFailure(once), socket), once);
});

Deno.test("shownFailure: a cut never splits an escape the message holds (JSON-quoted names)", () => {
  for (const name of ["\x1b".repeat(3000), "\\".repeat(3000), "a\\u1234".repeat(800)]) {
    for (let shift = 0; shift < 8; shift++) {
      const message = `${"x".repeat(shift)}No buffer ${JSON.stringify(name)} here.`;
      const shown = shownFailure(message, "list_buffers lists them.");
      assert.ok(jsonStringBytes(shown) <= MAX_FAILURE_BYTES);
      assert.match(shown, /list_buffers lists them\.$/);
      const kept = shown.slice(0, shown.indexOf("… ("));
      // What is kept is the message's start, ending on no half escape.
      assert.ok(message.startsWith(kept), `shift ${shift}`);
      assert.doesNotMatch(kept, /(^|[^\\])(\\\\)*\\(u[0-9a-fA-F]{0,3})?$/, `shift ${shift}`);
    }
  }
});

Deno.test("nameList: at most six names, each cut, quoted, and a count of the rest", () => {
  const names = Array.from({ length: 9 }, (_, i) => `${"b".repeat(100)}${i}`);
  const listed = nameList(names);
  assert.match(listed, / and 3 more$/);
  assert.ok(listed.length < 6 * 70 + 20, listed);
  assert.equal(nameList(['a"b']), '"a\\"b"');
});

Deno.test("errorStart: a batch row's error cut ends on no half escape and says what went", () => {
  const whole = `No buffer "${"\\u001b".repeat(50)}" (a\\x1bb \\x01).`;
  for (let keep = 0; keep < 60; keep++) {
    const cut = errorStart(whole, keep);
    const kept = cut.replace(/… \(\d+ bytes cut\)$/, "");
    assert.ok(whole.startsWith(kept), `keep ${keep}`);
    assert.doesNotMatch(kept, /\\(u[0-9a-fA-F]{0,3}|x[0-9a-fA-F]?)?$/, `keep ${keep}: ${kept}`);
    if (kept !== whole) assert.match(cut, /… \(\d+ bytes cut\)$/);
  }
  assert.equal(errorStart("short", 100), "short");
});

Deno.test("a server that answered the call and then was gone went away during it: not 'no server is running'", () => {
  const socket = { socketName: "s" };
  const gone = [
    new TmuxError("no-server", "no server running on /tmp/tmux-0/s"),
    new NoServer('No tmux server is running on socket "s".', "create_session starts one."),
  ];
  for (const error of gone) {
    const acted = failureText(error, socket, { answered: true, answeredPid: 42, changes: true });
    assert.match(
      acted,
      /^The tmux server on socket "s" went away during the call \(pid 42 answered earlier in it: killed, crashed, its last pane exited, or a hook's command ended it\); what the call had done in tmux, if anything, went with it\. create_session starts a new one/,
    );
    const read = failureText(error, socket, { answered: true, answeredPid: null, changes: false });
    assert.match(
      read,
      /went away during the call \(it answered earlier in it: [^)]*\)\. create_session/,
    );
    assert.doesNotMatch(read, /what the call had done/, "a read changed nothing");
    // Never answered: no server was there to go away.
    const never = failureText(error, socket, { answered: false, answeredPid: null, changes: true });
    // (tmux's "no server running" is a refused connection: the socket of one that ended.)
    assert.match(
      never,
      /^No tmux server is running on socket "s"( \(the socket of one that ended is still there; tmux replaces it\))?\. create_session starts one/,
    );
    assert.equal(never, failureText(error, socket));
  }
  // Any other failure reads as it always did.
  const other = new ToolFailure("No pane %9.", "Hint.");
  assert.equal(
    failureText(other, socket, { answered: true, answeredPid: 1, changes: true }),
    "No pane %9. Hint.",
  );
});

Deno.test("failureText: a host that did not answer ends its reason with a full stop before the advice", () => {
  for (const reason of ["Connection refused", "no connection within 10 s", "It said so."]) {
    const text = failureText(new TmuxError("unreachable", reason), { socketName: "s" });
    assert.ok(!/[a-z0-9] Other hosts/.test(text), text);
    assert.match(text, /[.!?] Other hosts and this machine are unaffected/);
    assert.doesNotMatch(text, /\.\. Other/);
  }
});

Deno.test("describeSocket: without -L or -S, the server TMUX names, by its path", () => {
  const tmux = "/tmp/agent/sock,4242,0";
  assert.equal(describeSocket({}, tmux), "socket path /tmp/agent/sock (the one TMUX names)");
  assert.equal(describeSocket({}, undefined), "the default socket");
  assert.equal(describeSocket({ socketName: "w" }, tmux), 'socket "w"');
  assert.equal(describeSocket({ socketPath: "/s" }, tmux), "socket path /s");
  // On a host, TMUX (this machine's) names nothing.
  assert.equal(describeSocket({ host: "h" }, tmux), 'the default socket on host "h"');
  // A failure given only the configured address names the server TMUX names too.
  const address = {};
  noteTmuxEnv(address, tmux);
  const text = failureText(new TmuxError("no-server", "error connecting to x"), address);
  assert.doesNotMatch(text, /default socket/);
  assert.match(text, /^No tmux server is running on socket path \/tmp\/agent\/sock /);
});

Deno.test("configuredPath: --socket-path and TMUX's path are the person's; socket names are tmux's", () => {
  assert.deepEqual(configuredPath({ socketPath: "/p" }, "/t,1,0"), { path: "/p", by: "flag" });
  assert.deepEqual(configuredPath({}, "/t,1,0"), { path: "/t", by: "TMUX" });
  assert.equal(configuredPath({}, undefined), null);
  assert.equal(configuredPath({ socketName: "w" }, "/t,1,0"), null);
  assert.equal(configuredPath({ host: "h" }, "/t,1,0"), null);
});

Deno.test("failureText: a configured path that refuses connections is not said to be free for create_session", () => {
  const refused = new TmuxError(
    "no-server",
    "no server running on /tmp/it's",
    "no server running on /tmp/it's",
  );
  const text = failureText(refused, { socketPath: "/tmp/it's" });
  assert.match(text, /No tmux server answers on socket path \/tmp\/it's, but something is there/);
  assert.doesNotMatch(text, /create_session starts one/);
  // The removal it suggests takes a socket only, the path quoted for the shell.
  assert.ok(text.includes(`test -S '/tmp/it'\\''s' && rm '/tmp/it'\\''s'`), text);
  // A socket name's socket is tmux's to replace: create_session still starts one there.
  assert.match(failureText(refused, { socketName: "w" }), /create_session starts one/);
  // A path where this process met a server: what refuses is the socket it left.
  noteServerMet({ socketPath: "/tmp/met" });
  const left = failureText(refused, { socketPath: "/tmp/met" });
  assert.match(left, /^No tmux server is running on socket path \/tmp\/met \(the socket of one/);
  assert.match(left, /create_session starts one/);
  // Nothing there: create_session starts one.
  const absent = new TmuxError("no-server", "error connecting to /p (No such file or directory)");
  assert.match(failureText(absent, { socketPath: "/p" }), /create_session starts one/);
});

Deno.test("failureText: a path tmux can neither reach nor start a server at says to fix it", () => {
  const text = failureText(
    new TmuxError("failed", "error connecting to /tmp/d (Is a directory)"),
    { socketPath: "/tmp/d" },
  );
  assert.match(
    text,
    /^tmux could not reach socket path \/tmp\/d \(Is a directory\); nothing was done/,
  );
  assert.match(text, /fix --socket-path/);
});
