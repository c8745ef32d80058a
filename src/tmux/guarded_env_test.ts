import assert from "node:assert/strict";
import { guardedVariables } from "./guarded_env.ts";

Deno.test("guardedVariables: the variables Deno's refusal names, one or several", () => {
  const refusal = (text: string) => new Deno.errors.NotCapable(text);
  assert.deepEqual(
    guardedVariables(refusal(
      "Requires --allow-run permissions to spawn subprocess with LD_LIBRARY_PATH environment " +
        "variable. Alternatively, spawn with the environment variable unset.",
    )),
    ["LD_LIBRARY_PATH"],
  );
  assert.deepEqual(
    guardedVariables(refusal(
      "Requires --allow-run permissions to spawn subprocess with DYLD_FALLBACK_LIBRARY_PATH, " +
        "LD_LIBRARY_PATH environment variables. Alternatively, spawn with these environment " +
        "variables unset.",
    )),
    ["DYLD_FALLBACK_LIBRARY_PATH", "LD_LIBRARY_PATH"],
  );
  // Any other refusal, or another error, names none: it is thrown as it is.
  assert.deepEqual(guardedVariables(refusal('Requires run access to "sh"')), []);
  assert.deepEqual(guardedVariables(new Error("subprocess with X environment variable.")), []);
});
