/**
 * Reading a tmux environment back exactly: `show-environment -s` quotes every value for a
 * shell, and {@link parseShellEnvironment} undoes that byte for byte; the session a call
 * names (or the global environment), and its variables with each value cut to a bound.
 *
 * @module
 */

import { z } from "zod";
import { boundMetadata } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { metadataBound } from "../mcp/schemas.ts";
import { decodeBytes } from "../tmux/format.ts";
import { SERVER_ONLY, SESSIONS_ONLY } from "../tmux/snapshot.ts";

/** One variable of a tmux environment. */
export interface EnvVariable {
  readonly name: string;
  /** The value, or null for a variable marked to be removed from new processes. */
  readonly value: string | null;
}

/**
 * Parses `show-environment -s`: `NAME="value"; export NAME;` (the value with `$`, `` ` ``,
 * `"` and `\` escaped by a backslash, newlines raw) or `unset NAME;`, one statement a line.
 * Works on bytes so that any byte in a value survives; throws on anything else (never guess).
 */
export function parseShellEnvironment(stdout: Uint8Array): EnvVariable[] {
  const out: EnvVariable[] = [];
  let i = 0;
  const at = (s: string) => {
    for (let k = 0; k < s.length; k++) if (stdout[i + k] !== s.charCodeAt(k)) return false;
    return true;
  };
  const until = (stop: number) => {
    const start = i;
    while (i < stdout.length && stdout[i] !== stop) i++;
    if (i >= stdout.length) throw new Error("show-environment output ended early");
    return decodeBytes(stdout.subarray(start, i));
  };
  const expect = (s: string) => {
    if (!at(s)) throw new Error(`show-environment output: expected ${JSON.stringify(s)}`);
    i += s.length;
  };
  while (i < stdout.length) {
    if (at("unset ")) {
      i += 6;
      const name = until(0x3b); // ;
      expect(";\n");
      out.push({ name, value: null });
      continue;
    }
    const name = until(0x3d); // =
    expect('="');
    const bytes: number[] = [];
    while (i < stdout.length && stdout[i] !== 0x22) {
      if (stdout[i] === 0x5c && i + 1 < stdout.length) i++;
      bytes.push(stdout[i++]);
    }
    expect(`"; export ${name};\n`);
    out.push({ name, value: decodeBytes(new Uint8Array(bytes)) });
  }
  return out;
}

/** One variable as the environment tools report it. */
export const envEntry = z.strictObject({
  name: z.string(),
  value: z.string().nullable().describe("The value, or null when marked for removal."),
  removed: z.boolean().describe(
    "Marked to be removed from the environment of new processes (tmux shows it as -NAME).",
  ),
  ...metadataBound,
});

type EnvEntry = z.infer<typeof envEntry>;

/** The session named (its id), or null for the global environment; refused with no server. */
export async function environmentSession(
  ctx: TmuxContext,
  session: string | undefined,
): Promise<string | null> {
  if (session !== undefined) return ctx.session(await ctx.snapshot(SESSIONS_ONLY), session).id;
  ctx.requireRunning(await ctx.snapshot(SERVER_ONLY));
  return null;
}

/** Longest environment value returned before it is cut. */
const MAX_ENV_VALUE_BYTES = 16_384;

/** The variables of a session's environment, or the global one, each value cut to a bound. */
export async function readEnvironment(
  ctx: TmuxContext,
  sessionId: string | null,
): Promise<EnvEntry[]> {
  const out = await ctx.read([
    "show-environment",
    "-s",
    ...(sessionId === null ? ["-g"] : ["-t", sessionId]),
  ]);
  return parseShellEnvironment(out).map((v) =>
    boundMetadata(
      { name: v.name, value: v.value, removed: v.value === null },
      ["value"],
      MAX_ENV_VALUE_BYTES,
    )
  );
}
