import assert from "node:assert/strict";
import { byteLength, jsonStringBytes } from "../mcp/bounds.ts";
import { compileRegex, loadRegexEngine } from "../mcp/pattern.ts";
import { columnIndex } from "./pane_watch.ts";
import { keepTail } from "./wait.ts";

const HOSTILE = [
  "plain ascii output\n",
  '"\\'.repeat(55) + "\n",
  "\u0001\u001b[31m\b\t\n",
  "日本語 🙂 é\n",
  "\ud800 lone\n",
  "\u2028\u0085",
];

Deno.test("keepTail keeps the most of the end that fits as JSON on the wire, once or twice", () => {
  for (let n = 0; n < 200; n++) {
    const text = Array.from({ length: 40 + n }, (_, i) => HOSTILE[(i * 7 + n) % HOSTILE.length])
      .join("");
    for (const max of [50, 1_000, 4_000]) {
      for (const twice of [false, true]) {
        // Twice: the string's own quotes (escaped, four bytes) belong to the JSON around it.
        const cost = (t: string) =>
          twice ? jsonStringBytes(JSON.stringify(t)) - 4 : jsonStringBytes(t);
        const kept = keepTail(text, max, twice);
        assert.ok(text.endsWith(kept.text));
        assert.ok(cost(kept.text) <= max, `${cost(kept.text)} > ${max}`);
        assert.equal(kept.omittedBytes + byteLength(kept.text), byteLength(text));
        if (kept.omittedBytes > 0) {
          // One more character (a whole pair) would not have fitted.
          const at = text.length - kept.text.length;
          const back = at >= 2 && /[\udc00-\udfff]/.test(text[at - 1]) &&
              /[\ud800-\udbff]/.test(text[at - 2])
            ? 2
            : 1;
          assert.ok(cost(text.slice(at - back)) > max);
        }
      }
    }
  }
});

Deno.test("columnIndex counts cells: wide characters two, combining marks none, blanks past the end", () => {
  assert.equal(columnIndex("P> ", 3), 3);
  assert.equal(columnIndex("P>", 3), 3);
  assert.equal(columnIndex("e\u0301e\u0301e\u0301 line", 3), 6);
  assert.equal(columnIndex("日本 x", 4), 2);
  assert.equal(columnIndex("🙂x", 2), 2);
  assert.equal(columnIndex("", 0), 0);
});

Deno.test("a regex's lastEnd is the end of the match that ends last, whatever the pattern", async () => {
  await loadRegexEngine();
  const end = (pattern: string, line: string, matchCase = false) =>
    compileRegex(pattern, matchCase, "p").lastEnd(line);
  assert.equal(end("o", "hello wOrld"), 8);
  assert.equal(end("o", "hello wOrld", true), 5);
  assert.equal(end("\\d+%", "a 5% b 70%"), 10);
  assert.equal(end("^progress", "progress 50%"), 8);
  assert.equal(end("x|y", "none"), -1);
  assert.equal(end("o", "🙂o🙂o🙂"), 6);
  // Alternatives and a group of its own, an unclosed \Q: wrapped as one pattern.
  assert.equal(end("a|b", "ab--"), 2);
  assert.equal(end("(?i)A", "xa"), 2);
  assert.equal(end("\\Qa)b", "a)b."), 3);
  assert.equal(end("\\Qa\\", "a\\z"), 2);
});
