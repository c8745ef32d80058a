import assert from "node:assert/strict";
import { TerminalText } from "./terminal_text.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("TerminalText strips escapes and rebuilds lines across arbitrary chunks", () => {
  const t = new TerminalText();
  const stream =
    "\x1b[32mDO\x1b[0mNE\r\n\x1b]0;title\x07pro 50%\rpro 90%\r\n日本🙂 tab\tx\x1b(Bok\n" +
    "\x1bP1$r\x1b\\after";
  const all = bytes(stream);
  const lines: string[] = [];
  // One byte at a time: every escape, CR LF and UTF-8 sequence is split somewhere.
  for (let i = 0; i < all.length; i++) lines.push(...t.push(all.subarray(i, i + 1)));
  assert.deepEqual(lines, ["DONE", "pro 50%", "pro 90%", "日本🙂 tab\txok"]);
  assert.equal(t.partial, "after");
  assert.deepEqual(t.recent().slice(-2), ["日本🙂 tab\txok", "after"]);
});
