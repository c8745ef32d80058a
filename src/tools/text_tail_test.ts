import assert from "node:assert/strict";
import { byteLength, jsonStringBytes } from "../mcp/bounds.ts";
import { keepTail } from "./text_tail.ts";

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
