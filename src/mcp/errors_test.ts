import assert from "node:assert/strict";
import { TmuxError } from "../tmux/tmux_error.ts";
import { failureText, ToolFailure, visible } from "./errors.ts";

Deno.test("visible: controls as \\xNN, line separators and bidirectional controls as \\uXXXX", () => {
  // Tabs and newlines stay: an error text may hold lines of its own.
  assert.equal(visible("a\tb\nc"), "a\tb\nc");
  assert.equal(visible("\x1b[2J\x00\x7f\x9b\x85"), "\\x1B[2J\\x00\\x7F\\x9B\\x85");
  assert.equal(
    visible("a\u2028b\u2029c\u202ad\u202ee\u2066f\u2069g\u200eh\u200fi\u061cj"),
    "a\\u2028b\\u2029c\\u202ad\\u202ee\\u2066f\\u2069g\\u200eh\\u200fi\\u061cj",
  );
  // What summaries keep as it is stays too: other text, however far from ASCII.
  assert.equal(visible("日本語🙂 \u200b\u2060 ok"), "日本語🙂 \u200b\u2060 ok");
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
