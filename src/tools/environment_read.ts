/**
 * Reading a tmux environment back exactly: `show-environment -s` quotes every value for a
 * shell, and {@link parseShellEnvironment} undoes that byte for byte; a variable name may hold
 * `;` and a line break, which makes that listing ambiguous, so a whole environment is taken
 * only where tmux's plain listing, read in the same step, agrees ({@link checkedEnvironment}),
 * and one variable is read by its name. The session a call names (or the global environment),
 * and its variables with each value cut to a bound.
 *
 * @module
 */

import { z } from "zod";
import { boundMetadata } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { metadataBound } from "../mcp/schemas.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { decodeBytes, newGuard } from "../tmux/format.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { SERVER_ONLY, SESSIONS_ONLY } from "../tmux/snapshot.ts";

/** One variable of a tmux environment. */
export interface EnvVariable {
  readonly name: string;
  /** The value, or null for a variable marked to be removed from new processes. */
  readonly value: string | null;
}

/** What follows a set variable's value in `show-environment -s`, before its name again. */
const EXPORT = new TextEncoder().encode('"; export ');

/** One variable as tmux lists it, its name and value as bytes (null: marked removed). */
interface RawVariable {
  readonly name: Uint8Array;
  readonly value: Uint8Array | null;
}

/**
 * Splits `show-environment -s`: `NAME="value"; export NAME;` (the value with `$`, `` ` ``,
 * `"` and `\` escaped by a backslash, newlines raw) or `unset NAME;`, one statement a line.
 * A name holds no `=` but anything else (`;`, a line break, `unset `), so that listing alone
 * can be read more than one way (`unset A;\nunset B;` is the removed `A` and `B`, or the one
 * removed `A;\nunset B`). With `plain`, tmux's plain listing of the same environment (`NAME=value`
 * or `-NAME`, one a line, names and values raw), each statement is read the one way whose plain
 * line is the next in it: the two forms of a statement begin differently (`unset ` against
 * `-`), and two readings of a removed name differ where the shorter ends (`\n` against `;`), so
 * only the true reading matches. Without it (one variable read by its plain name), a removed
 * name runs to the first `;` and line break. Works on bytes; throws on anything else.
 */
function splitShellEnvironment(stdout: Uint8Array, plain?: Uint8Array): RawVariable[] {
  const out: RawVariable[] = [];
  let i = 0;
  let j = 0; // in plain
  const at = (s: string, from = i) => {
    for (let k = 0; k < s.length; k++) if (stdout[from + k] !== s.charCodeAt(k)) return false;
    return true;
  };
  const expected = (s: string) =>
    new Error(`show-environment output: expected ${JSON.stringify(s)}`);
  // The next `=` and the value after it, found once however many statements are tried
  // before it (removed names may be many): i only grows.
  let eq = -1;
  let value: { end: number; bytes: Uint8Array } | null = null;
  /** A set variable's statement at `i`, read to its end; null when it is not one. */
  const setVariable = (): RawVariable | null => {
    if (eq < i) {
      eq = stdout.indexOf(0x3d, i); // =
      if (eq === -1) eq = stdout.length;
      value = null;
    }
    if (eq >= stdout.length || !at('="', eq)) return null;
    if (value === null) {
      const bytes: number[] = [];
      let k = eq + 2;
      while (k < stdout.length && stdout[k] !== 0x22) {
        if (stdout[k] === 0x5c && k + 1 < stdout.length) k++;
        bytes.push(stdout[k++]);
      }
      value = { end: k, bytes: new Uint8Array(bytes) };
    }
    const name = stdout.subarray(i, eq);
    const tail = [...EXPORT, ...name, 0x3b, 0x0a];
    const k = value.end;
    for (let e = 0; e < tail.length; e++) if (stdout[k + e] !== tail[e]) return null;
    if (plain !== undefined) {
      const line = [...name, 0x3d, ...value.bytes, 0x0a];
      for (let e = 0; e < line.length; e++) if (plain[j + e] !== line[e]) return null;
      j += line.length;
    }
    i = k + tail.length;
    return { name, value: value.bytes };
  };
  while (i < stdout.length) {
    const set = setVariable();
    if (set) {
      out.push(set);
      continue;
    }
    if (!at("unset ")) throw expected('="');
    let k = i + 6;
    if (plain === undefined) {
      while (k < stdout.length && !(stdout[k] === 0x3b && stdout[k + 1] === 0x0a)) k++;
    } else {
      // `unset NAME;\n` against `-NAME\n`, byte for byte.
      if (plain[j] !== 0x2d) throw expected("-");
      let m = j + 1;
      while (
        k < stdout.length && !(stdout[k] === 0x3b && stdout[k + 1] === 0x0a && plain[m] === 0x0a)
      ) {
        if (stdout[k] !== plain[m]) throw expected("the same name");
        k++;
        m++;
      }
      j = m + 1;
    }
    if (k >= stdout.length) throw expected(";\n");
    out.push({ name: stdout.subarray(i + 6, k), value: null });
    i = k + 2;
  }
  if (plain !== undefined && j !== plain.length) throw expected("the end");
  return out;
}

function decoded(variables: readonly RawVariable[]): EnvVariable[] {
  return variables.map((v) => ({
    name: decodeBytes(v.name),
    value: v.value === null ? null : decodeBytes(v.value),
  }));
}

/**
 * Parses `show-environment -s` (see {@link splitShellEnvironment}): exact for one variable of
 * a plain name; a whole listing is {@link checkedEnvironment}'s.
 */
export function parseShellEnvironment(stdout: Uint8Array): EnvVariable[] {
  return decoded(splitShellEnvironment(stdout));
}

/** A pair of listings that do not describe one environment (see {@link checkedEnvironment}). */
export class AmbiguousEnvironment extends Error {
  constructor() {
    super("show-environment's listings do not agree");
    this.name = "AmbiguousEnvironment";
  }
}

/**
 * The variables of `show-environment -s` (`shell`), each read the one way tmux's plain listing
 * of the same environment (`plain`, read in the same step) agrees with, which the plain listing
 * must then be exactly, byte for byte (see {@link splitShellEnvironment}): a variable name
 * holding `;` and a line break (`FOO;\nunset LD_PRELOAD`, marked removed) is read as the one
 * variable it is, not as two. Throws {@link AmbiguousEnvironment} when no reading agrees:
 * never guess.
 */
export function checkedEnvironment(shell: Uint8Array, plain: Uint8Array): EnvVariable[] {
  try {
    return decoded(splitShellEnvironment(shell, plain));
  } catch {
    throw new AmbiguousEnvironment();
  }
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

/** One variable as the tools report it, its value cut to a bound. */
function entryOf(v: EnvVariable): EnvEntry {
  return boundMetadata(
    { name: v.name, value: v.value, removed: v.value === null },
    ["value"],
    MAX_ENV_VALUE_BYTES,
  );
}

/** The flags naming a session's environment, or the global one. */
function scopeFlags(sessionId: string | null): string[] {
  return sessionId === null ? ["-g"] : ["-t", sessionId];
}

/**
 * The variables of a session's environment, or the global one, each value cut to a bound:
 * both of tmux's listings, read in one step, each variable read the one way they agree on
 * ({@link checkedEnvironment}); refused when no reading agrees, never guessed.
 */
export async function readEnvironment(
  ctx: TmuxContext,
  sessionId: string | null,
): Promise<EnvEntry[]> {
  const guard = newGuard();
  const out = await ctx.read([
    ...["show-environment", "-s", ...scopeFlags(sessionId), ";"],
    ...["display-message", "-p", "--", guard, ";"],
    ...["show-environment", ...scopeFlags(sessionId)],
  ]);
  const mark = new TextEncoder().encode(`${guard}\n`);
  let at = -1;
  for (let k = 0; k + mark.length <= out.length; k++) {
    if ((k === 0 || out[k - 1] === 0x0a) && mark.every((b, e) => out[k + e] === b)) {
      at = k;
      break;
    }
  }
  try {
    if (at === -1) throw new AmbiguousEnvironment();
    return checkedEnvironment(out.subarray(0, at), out.subarray(at + mark.length)).map(entryOf);
  } catch (error) {
    if (!(error instanceof AmbiguousEnvironment)) throw error;
    const where = sessionId === null
      ? "the global environment"
      : `session ${sessionId}'s environment`;
    throw new ToolFailure(
      `tmux's two listings of ${where} (show-environment -s, and plain) do not read as the ` +
        "same variables, so which ones it holds cannot be told for sure; nothing is reported " +
        "rather than guessed.",
      "Give name to read one variable exactly; tmux show-environment " +
        `${scopeFlags(sessionId).join(" ")} lists them all as tmux holds them.`,
    );
  }
}

/**
 * One variable of a session's environment, or the global one (`name`, a plain variable name),
 * read by name, so that no other variable's name can make the answer ambiguous; undefined
 * when the environment has no entry for it (or hides it: set-environment -h).
 */
export async function readVariable(
  ctx: TmuxContext,
  sessionId: string | null,
  name: string,
): Promise<EnvEntry | undefined> {
  let out: Uint8Array;
  try {
    out = await ctx.read(["show-environment", "-s", ...scopeFlags(sessionId), "--", name]);
  } catch (error) {
    if (error instanceof TmuxError && /^unknown variable: /.test(error.message)) return undefined;
    throw error;
  }
  const found = parseShellEnvironment(out);
  if (found.length > 1 || (found.length === 1 && found[0].name !== name)) {
    throw new Error(`show-environment answered for ${JSON.stringify(name)} with other variables`);
  }
  return found.length === 0 ? undefined : entryOf(found[0]);
}
