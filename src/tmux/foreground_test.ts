import assert from "node:assert/strict";
import { shellHoldsTerminal } from "./foreground.ts";

async function sh(script: string): Promise<number> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", script],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code;
}

Deno.test("shellHoldsTerminal takes only a pid", () => {
  assert.throws(() => shellHoldsTerminal(0), RangeError);
  assert.throws(() => shellHoldsTerminal(1.5), RangeError);
  assert.throws(() => shellHoldsTerminal(Number.NaN), RangeError);
});

Deno.test("shellHoldsTerminal: a process that is gone holds nothing", async () => {
  assert.notEqual(await sh(shellHoldsTerminal(2 ** 30)), 0);
});
