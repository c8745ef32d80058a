/**
 * What the creating, arranging and configuring families share: client text made safe for a
 * tmux argument, names refused up front when tmux would store something else, and a few
 * reads of what tmux did.
 *
 * tmux rewrites some names silently (a session name's `.` and `:` become `_`, a backslash is
 * doubled, a tab becomes the two characters `\t`) and drops a pane title holding a control
 * character with exit status 0. Refusing such text before tmux sees it is the only way the
 * caller learns why; reading the stored value back afterwards proves nothing else changed it.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { ToolAnnotations } from "../mcp/registry.ts";
import { checkedString } from "../mcp/schemas.ts";
import {
  escapeFormat,
  escapeTrailingSemicolon,
  newGuard,
  parseRecords,
  recordFormat,
  UNDECODABLE,
} from "../tmux/format.ts";
import { TmuxError } from "../tmux/run.ts";

/**
 * A client string as a tmux argument that tmux does not expand as a format: only a final `;`
 * needs escaping (tmux would read it as a command separator).
 */
export function literalArg(text: string): string {
  return escapeTrailingSemicolon(text);
}

/**
 * A client string as an argument tmux expands as a format (names, titles, start directories,
 * pipe commands): `#` doubled so `#{...}` stays text and `#(...)` never runs, and a final `;`
 * escaped.
 */
export function formatArg(text: string): string {
  return escapeTrailingSemicolon(escapeFormat(text));
}

/** Control characters (C0, DEL, C1): tmux rewrites or drops text holding them. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** What kind of name, for the rules and the messages. */
export type NameKind = "session name" | "window name" | "pane title";

/**
 * Refuses a name tmux would store differently from what was asked, saying why: session names
 * lose `.` and `:`; session and window names double a backslash, spell control characters out
 * and escape `$a` when renamed; `#[` becomes `##[`; a title with a control character is dropped. Text that is not well-formed Unicode (a
 * lone surrogate) could not reach tmux intact either.
 */
export function checkName(kind: NameKind, name: string): void {
  const refuse = (why: string, hint = "Choose a name without it; nothing was changed.") => {
    throw new ToolFailure(`The ${kind} ${JSON.stringify(name)} ${why}.`, hint);
  };
  if (name === "") refuse("is empty", "Give one at least a character long; nothing was changed.");
  if (!name.isWellFormed()) refuse("is not well-formed Unicode (a lone surrogate)");
  if (CONTROL.test(name)) {
    refuse(
      kind === "pane title"
        ? "holds a control character (tab, newline...), and tmux silently ignores such a title"
        : "holds a control character (tab, newline...), which tmux would store spelled out as \\t or \\n",
    );
  }
  if (kind !== "pane title" && name.includes("\\")) {
    refuse("holds a backslash, which tmux would store doubled");
  }
  if (kind !== "pane title" && /\$[A-Za-z_{]/.test(name)) {
    // rename-window and rename-session store `$a` as `\$a` (new-window does not): refused
    // everywhere, so that a name that can be given can also be given again.
    refuse("holds '$' before a letter, '_' or '{', which tmux would store as '\\$'");
  }
  if (name.includes("#[")) {
    // `#` is escaped as `##` (no format runs), and tmux keeps `##[` as it is: a style's `#[`
    // cannot be stored as given.
    refuse("holds '#[' (a tmux style), which tmux would store as '##['");
  }
  if (kind === "session name" && /[.:]/.test(name)) {
    refuse("holds '.' or ':', which tmux would rewrite to '_' (they separate parts of a target)");
  }
  if (kind === "session name" && /^\$\d+$/.test(name)) {
    // tmux, and every tool here, reads `$2` as the session with that id before any name.
    refuse("looks like a session id ($N), so naming that session would reach another");
  }
}

/**
 * Refuses when tmux stored something other than what was asked (read back after a change):
 * the check that a rewrite slipped past {@link checkName} is never silent.
 */
export function requireStored(what: string, stored: string, asked: string, retry: string): void {
  if (stored === asked) return;
  throw new ToolFailure(
    `tmux stored the ${what} as ${JSON.stringify(stored)}, not ${JSON.stringify(asked)}.`,
    retry,
  );
}

/** The annotations of a tool that changes tmux, saying which of the two hints hold. */
export function changes(
  hints: { readonly destructive: boolean; readonly idempotent: boolean },
): ToolAnnotations {
  return {
    readOnlyHint: false,
    destructiveHint: hints.destructive,
    idempotentHint: hints.idempotent,
    openWorldHint: false,
  };
}

/** Where tmux's end state differs from what was asked, and why (empty when it does not). */
export const notesField = z.array(z.string()).describe(
  "Where what tmux did differs from what was asked, and why; empty when it does not.",
);

/** A name as tools take it; {@link checkName} applies the tmux rules. */
export const nameSchema = checkedString(1024, 0);

/**
 * An absolute start directory (tmux would resolve a relative one against its own cwd). tmux
 * falls back to another directory silently when it cannot enter it; results say where the
 * pane really started.
 */
export const startDirectorySchema = checkedString(4096).regex(/^\//, "an absolute path");

/**
 * Refuses a start directory holding U+FFFD: what a name with bytes that are not UTF-8 reads as
 * (see decodeBytes), so it names such a folder only approximately, and a folder really named
 * with U+FFFD would be another one (one made to be landed in).
 */
export function checkStartDirectory(directory: string | undefined): void {
  if (directory === undefined || !directory.includes(UNDECODABLE)) return;
  throw new ToolFailure(
    "startDirectory holds U+FFFD, which stands for bytes that are not UTF-8 in a name tmux-mcp " +
      "read: it cannot name that folder exactly, and a folder really named with U+FFFD is " +
      "another one.",
    "Leave startDirectory out (create_window starts in the session's folder, split_window in " +
      "the source pane's, byte for byte), or cd there in the command.",
  );
}

/**
 * The `-c` of a new pane in a folder tmux reported (`read`, decoded): the path itself, or, when
 * decoding lost bytes of it (U+FFFD), `format`, which tmux expands to the folder's own bytes.
 */
export function reportedDirectoryArg(read: string, format: string): string {
  return read.includes(UNDECODABLE) ? format : formatArg(read);
}

/** A shell command for a new process; tmux runs it with its default-shell `-c`. */
export const commandSchema = checkedString(16_384);

/** An environment variable name tmux and shells both accept. */
export const envNameSchema = z.string().regex(
  /^[A-Za-z_][A-Za-z0-9_]{0,255}$/,
  "an environment variable name (letters, digits, underscore; not starting with a digit)",
);

/**
 * Reads framed fields of one pane (`#{...}` formats of ours, never a client's); null when the
 * pane is gone (a process that exited at once takes its pane with it).
 */
export async function paneFields(
  ctx: TmuxContext,
  paneId: string,
  fields: readonly string[],
): Promise<string[] | null> {
  const guard = newGuard();
  const format = recordFormat(guard, ["#{pane_id}", ...fields]);
  let out: Uint8Array;
  try {
    out = await ctx.read(["list-panes", "-t", paneId, "-F", format]);
  } catch (error) {
    if (error instanceof TmuxError && (error.kind === "no-target" || error.kind === "no-server")) {
      return null;
    }
    throw error;
  }
  const records = parseRecords(out, guard, fields.length + 1);
  // list-panes -t %N lists the pane's whole window: pick the pane itself.
  const mine = records.find((r) => r[0] === paneId);
  return mine ? mine.slice(1) : null;
}

/**
 * Where a new pane's process really is. tmux enters the start directory in the child after
 * fork and falls back to home or `/` silently when it cannot: compare, and say so. Read twice
 * at most, because the very first read can come before the child's chdir.
 */
export async function startedIn(
  ctx: TmuxContext,
  paneId: string,
  requested: string | undefined,
): Promise<{ cwd: string; notes: string[] }> {
  const read = async () => (await paneFields(ctx, paneId, ["#{pane_current_path}"]))?.[0];
  let cwd = await read();
  if (cwd === undefined) return { cwd: "", notes: [GONE(paneId)] };
  if (requested === undefined || sameDirectory(cwd, requested)) return { cwd, notes: [] };
  await new Promise((resolve) => setTimeout(resolve, 100));
  cwd = await read();
  if (cwd === undefined) return { cwd: "", notes: [GONE(paneId)] };
  if (sameDirectory(cwd, requested)) return { cwd, notes: [] };
  return {
    cwd,
    notes: [
      `The pane's process is in ${JSON.stringify(cwd)}, not ${
        JSON.stringify(requested)
      }: tmux starts elsewhere when it cannot enter the directory (missing, or not permitted), or the command changed directory.`,
    ],
  };
}

/** The note for a pane whose process exited before it could be looked at. */
export const GONE = (paneId: string): string =>
  `Pane ${paneId} is already gone: its process exited at once and took the pane with it (remain-on-exit keeps such panes).`;

function sameDirectory(a: string, b: string): boolean {
  const trim = (p: string) => p.length > 1 ? p.replace(/\/+$/, "") : p;
  return trim(a) === trim(b);
}

/** Pluralizes a count for summaries. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
