/**
 * What the creating, arranging and configuring families share: client text made safe for a
 * tmux argument, names refused up front when tmux would store something else, and a few
 * reads of what tmux did.
 *
 * tmux rewrites some names silently (a session name's `.` and `:` become `_`, a backslash is
 * doubled, a tab becomes the two characters `\t`, a character it cannot print is octal-escaped)
 * and drops a pane title holding a control character with exit status 0. Refusing such text
 * before tmux sees it is the only way the caller learns why; reading the stored value back
 * afterwards proves nothing else changed it.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import type { ToolAnnotations } from "../mcp/tool_spec.ts";
import { checkedString } from "../mcp/schemas.ts";
import {
  escapeFormat,
  escapeTrailingSemicolon,
  newGuard,
  parseRecords,
  recordFormat,
  UNDECODABLE,
} from "../tmux/format.ts";
import { tmuxChild } from "../tmux/foreground.ts";
import { endedBy, learnExitStatus, probePane } from "./pane_probe.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { shellSays } from "../tmux/if_shell.ts";
import { shellQuote } from "./pipe_checks.ts";

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

/** The refusal of a name, with the hint every such refusal shares. */
function refuseName(
  kind: NameKind,
  name: string,
  why: string,
  hint = "Choose a name without it; nothing was changed.",
): never {
  throw new ToolFailure(`The ${kind} ${JSON.stringify(name)} ${why}.`, hint);
}

/**
 * Refuses a name tmux would store differently from what was asked, saying why: session names
 * lose `.` and `:`; session and window names double a backslash, spell control characters out
 * and escape `$a` when renamed; `#[` becomes `##[`; a title with a control character is
 * dropped. Text that is not well-formed Unicode (a lone surrogate) could not reach tmux intact
 * either. What only tmux can tell (which characters it can print) is {@link checkNames}'s.
 */
export function checkName(kind: NameKind, name: string): void {
  const refuse = (why: string, hint?: string) => refuseName(kind, name, why, hint);
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
 * Refuses names tmux would not store as given, before anything changes: {@link checkName}'s
 * rules for each, then one question to the tmux server about the characters beyond ASCII.
 *
 * tmux octal-escapes, in session and window names, every character its C library gives no
 * width (`wcwidth() < 0`: with glibc, code points unassigned in its Unicode tables,
 * noncharacters, U+2028 and U+2029), and ignores a pane title holding one. Which characters
 * those are depends on the C library's Unicode version (an emoji of Unicode 15 is unassigned
 * to glibc 2.36) and on how tmux was built, so the server is asked: `#{=N:...}` (trim to a
 * width) runs each character through the same test and drops the ones that fail. The text
 * goes in `#{l:...}` (literal) and holds only characters beyond ASCII, none of which a format
 * can read as syntax. With no server to ask (create_session starting one), the characters
 * unassigned to this process's Unicode tables, and the two separators, stand for them.
 * new-window -n alone stores such a character as it is: refused there too, so that a name
 * that can be given can also be given again.
 *
 * The same question asks whether a person's terminal would get the name raw in its title
 * ({@link EIGHT_BIT_TITLE}): then any name beyond ASCII is refused.
 */
export async function checkNames(
  ctx: TmuxContext,
  names: ReadonlyArray<readonly [NameKind, string | undefined]>,
): Promise<void> {
  const given = names.filter((n): n is readonly [NameKind, string] => n[1] !== undefined);
  for (const [kind, name] of given) checkName(kind, name);
  const beyond = [
    ...new Set(given.flatMap(([, name]) => [...name].filter((ch) => ch.codePointAt(0)! > 0x7f))),
  ];
  if (beyond.length === 0) return;
  const { unprintable, eightBit } = await askTmux(ctx, beyond);
  for (const [kind, name] of given) {
    const ch = [...name].find((c) => unprintable.has(c));
    if (ch === undefined) continue;
    const code = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    const octal = [...new TextEncoder().encode(ch)].map((b) => `\\${b.toString(8)}`).join("");
    refuseName(
      kind,
      name,
      `holds ${code}, a character tmux cannot print (its C library gives it no width: ` +
        "unassigned in its Unicode tables, a noncharacter, or a line or paragraph separator), " +
        (kind === "pane title"
          ? "and tmux silently ignores a title holding one"
          : `which tmux would store octal-escaped, as ${octal}`),
    );
  }
  if (eightBit.length > 0) {
    const [kind, name] = given.find(([, name]) => [...name].some((c) => beyond.includes(c)))!;
    refuseName(
      kind,
      name,
      `holds characters beyond ASCII, and the terminal of client ${eightBit[0]} takes no ` +
        "UTF-8 while its session has set-titles on: tmux would write the name's bytes raw " +
        "into that terminal's title, where bytes 0x80 to 0x9F are control codes (CSI, OSC, ST)",
      "Choose an ASCII name; nothing was changed. set-titles off, or a UTF-8 locale in the " +
        "person's terminal, lifts this.",
    );
  }
}

/**
 * A person's client whose terminal takes no UTF-8 and whose session has set-titles on: its
 * tty, else nothing. tmux 3.3a writes a title to such a terminal as the bytes stored (the
 * status line gets `_` for each character beyond ASCII), and to a terminal that reads 8-bit
 * controls a byte of UTF-8 from 0x80 to 0x9F is a C1 control: U+011C is C4 9C, and 9C is ST,
 * which ends the title; U+00DB is C3 9B, and 9B is CSI. A name shows in the title of a client
 * whose session holds it (tmux's `set-titles-string` names the session, the current window
 * and its active pane's title), now or once that client goes there: any such client on the
 * server counts. A control client gets no title.
 */
const EIGHT_BIT_TITLE = "#{?client_control_mode,,#{?client_utf8,,#{?set-titles,#{client_tty},}}}";

/**
 * Refuses text beyond ASCII that tmux may write raw into a person's terminal title
 * ({@link EIGHT_BIT_TITLE}), with one question to the tmux server (none for ASCII text). For
 * text that is not a name ({@link checkNames} asks for names): an option's value, which a
 * title format may show (set-titles-string is one, and may name any other option).
 */
export async function checkTitleText(ctx: TmuxContext, what: string, text: string): Promise<void> {
  if (![...text].some((ch) => ch.codePointAt(0)! > 0x7f)) return;
  let ttys: string[];
  try {
    ttys = new TextDecoder().decode(await ctx.read(["list-clients", "-F", EIGHT_BIT_TITLE]))
      .split("\n").filter((tty) => tty !== "");
  } catch (error) {
    // No server: nobody is attached either.
    if (error instanceof TmuxError && error.kind === "no-server") return;
    throw error;
  }
  if (ttys.length === 0) return;
  throw new ToolFailure(
    `${what} holds characters beyond ASCII, and the terminal of client ${ttys[0]} takes no ` +
      "UTF-8 while its session has set-titles on: tmux would write them raw into that " +
      "terminal's title wherever a title format shows this text, and there bytes 0x80 to 0x9F " +
      "are control codes (CSI, OSC, ST).",
    "Use ASCII; nothing was changed. set-titles off, or a UTF-8 locale in the person's " +
      "terminal, lifts this.",
  );
}

/** Wide enough for any name's characters at two columns each, and the two brackets. */
const PROBE_WIDTH = 65_536;

/** What stands for tmux's answer when no server runs (see {@link checkNames}). */
const NO_WIDTH = /[\p{Cn}\p{Zl}\p{Zp}]/u;

/**
 * One question to the tmux server about these characters (none ASCII): which of them it
 * cannot print, and which person's clients would get them raw in a title
 * ({@link EIGHT_BIT_TITLE}: their ttys).
 */
async function askTmux(
  ctx: TmuxContext,
  chars: readonly string[],
): Promise<{ unprintable: Set<string>; eightBit: string[] }> {
  const guess = () => new Set(chars.filter((ch) => NO_WIDTH.test(ch)));
  let lines: string[];
  try {
    lines = new TextDecoder().decode(
      await ctx.read([
        "display-message",
        "-p",
        "--",
        `#{=${PROBE_WIDTH}:#{l:[${chars.join("")}]}}`,
        ";",
        "list-clients",
        "-F",
        EIGHT_BIT_TITLE,
      ]),
    ).split("\n");
  } catch (error) {
    // No server: nobody is attached either.
    if (error instanceof TmuxError && error.kind === "no-server") {
      return { unprintable: guess(), eightBit: [] };
    }
    throw error;
  }
  const [out, ...clients] = lines;
  const eightBit = clients.filter((tty) => tty !== "");
  // A tmux without these modifiers answers something else: guess rather than refuse all.
  if (!out.startsWith("[") || !out.endsWith("]")) return { unprintable: guess(), eightBit };
  const kept = new Set(out.slice(1, -1));
  return { unprintable: new Set(chars.filter((ch) => !kept.has(ch))), eightBit };
}

/**
 * Refuses when tmux stored something other than what was asked (read back after a change):
 * the check that a rewrite slipped past {@link checkNames} is never silent.
 */
export function requireStored(what: string, stored: string, asked: string, retry: string): void {
  if (stored === asked) return;
  throw new ToolFailure(
    `tmux stored the ${what} as ${JSON.stringify(stored)}, not ${JSON.stringify(asked)}.`,
    retry,
  );
}

/**
 * Renames to `asked` with `rename` (which renames and returns what tmux then holds) and returns
 * the name stored. {@link requireStored} for a rename: when tmux stored something other than
 * what was asked, renames back to the previous name the same way first, so that the failure
 * leaves nothing changed, and says whether it did.
 */
export async function renameChecked(
  what: NameKind,
  asked: string,
  previous: string,
  rename: (name: string) => Promise<string>,
  retry: string,
): Promise<string> {
  const stored = await rename(asked);
  if (stored === asked) return stored;
  let back: string;
  try {
    const now = await rename(previous);
    back = now === previous
      ? `It was renamed back to ${JSON.stringify(previous)}: nothing was changed.`
      : `Renaming it back to ${JSON.stringify(previous)} stored ${JSON.stringify(now)}: ` +
        "tmux cannot store that name as it is either.";
  } catch (error) {
    back = `Renaming it back to ${JSON.stringify(previous)} failed: ${
      error instanceof Error ? error.message : String(error)
    }.`;
  }
  throw new ToolFailure(
    `tmux stored the ${what} as ${JSON.stringify(stored)}, not ${JSON.stringify(asked)}. ${back}`,
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

/**
 * A string of at most `max` characters (at least `min`) that tmux receives as given: none that
 * holds a NUL character (tmux ends an argument there, so the command it runs would be cut and
 * what follows lost, its guard's refusal branch too) or a lone surrogate (it has no UTF-8 form:
 * a replacement character would arrive). Checked on every call; the listed schema is
 * {@link checkedString}'s.
 */
export function passableString(max: number, min = 1): z.ZodString {
  return checkedString(max, min)
    .refine((s) => !s.includes("\0"), {
      message: "holds a NUL character, where tmux would cut it (what follows would be lost); " +
        "nothing was done",
    })
    .refine((s) => s.isWellFormed(), {
      message: "is not well-formed Unicode (a lone surrogate), so tmux could not receive it " +
        "as given; nothing was done",
    });
}

/** A name as tools take it; {@link checkName} applies the tmux rules. */
export const nameSchema = checkedString(1024, 0);

/**
 * An absolute start directory (tmux would resolve a relative one against its own cwd). tmux
 * falls back to another directory silently when it cannot enter it; results say where the
 * pane really started.
 */
export const startDirectorySchema = passableString(4096).regex(/^\//, "an absolute path");

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
export const commandSchema = passableString(16_384);

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

/** What {@link startedIn} found of a new pane. */
export interface Started {
  /** Where its process is ("" when it has ended). */
  readonly cwd: string;
  /** Where that differs from what was asked, and why. */
  readonly notes: string[];
  /** Whether its process has ended already (the pane gone, or kept dead by remain-on-exit). */
  readonly ended: boolean;
  /** The values of the extra fields asked for, read with the rest; null when the pane is gone. */
  readonly fields: string[] | null;
}

/**
 * Where a new pane's process really is. tmux enters the start directory in the child after
 * fork and falls back to home or `/` silently when it cannot: compare, and say so. A read can
 * come before the child's chdir: until the child has a terminal tmux reads no folder at all,
 * and until it execs the pane's program it is tmux itself (named so), in the server's folder.
 * Such a read is not judged: it is read again (for {@link START_WAIT_MS} at most, as long as a
 * loaded machine may take), and a folder that differs is told only of a started program. A
 * process that has ended already has no folder to compare: that is what is said, with its
 * exit status.
 *
 * `fields` are read in the same step: what tmux holds after the creating step, where the
 * values it printed (`-P`) came before a person's after-hooks ran (a rename, a new layout).
 */
export async function startedIn(
  ctx: TmuxContext,
  paneId: string,
  requested: string | undefined,
  fields: readonly string[] = [],
): Promise<Started> {
  /**
   * A read, whether it came before the child started the pane's program, and whether the
   * pane is dead with its exit status not yet known to tmux.
   */
  const look = async (): Promise<{ now: Started; starting: boolean; unreaped?: boolean }> => {
    const row = await paneFields(ctx, paneId, [
      "#{pane_current_path}",
      "#{pane_dead}",
      "#{pane_dead_status}",
      "#{pane_dead_signal}",
      "#{pane_current_command}",
      ...fields,
    ]);
    if (row === null) {
      return {
        now: { cwd: "", notes: [GONE(paneId)], ended: true, fields: null },
        starting: false,
      };
    }
    const [cwd, dead, status, signal, command, ...rest] = row;
    const starting = cwd === "" || tmuxChild(command);
    if (dead !== "1") return { now: { cwd, notes: [], ended: false, fields: rest }, starting };
    const how = endedBy(
      status === "" ? null : Number(status),
      signal === "" ? null : Number(signal),
    );
    const notes = [
      `Pane ${paneId}'s process already exited${how}; remain-on-exit keeps the pane, dead.`,
    ];
    return { now: { cwd: "", notes, ended: true, fields: rest }, starting, unreaped: how === "" };
  };
  let { now, starting, unreaped } = await look();
  if (unreaped) {
    // tmux 3.3a may leave the process a zombie it has not reaped (learnExitStatus): made to.
    await learnExitStatus(ctx, paneId, await probePane(ctx, paneId));
    ({ now, starting } = await look());
  }
  if (now.ended || requested === undefined || sameDirectory(now.cwd, requested)) return now;
  // A program named tmux (a nested client) reads as starting until the bound: then judged.
  const until = performance.now() + START_WAIT_MS;
  let pauseMs = 10;
  do {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    pauseMs = Math.min(100, pauseMs * 2);
    ({ now, starting } = await look());
    if (now.ended || sameDirectory(now.cwd, requested)) return now;
  } while (starting && performance.now() < until && !ctx.signal.aborted);
  if (await leadsTo(ctx, paneId, requested, now.cwd)) {
    return {
      ...now,
      notes: [
        `The pane's process is in ${JSON.stringify(now.cwd)}, the folder ${
          JSON.stringify(requested)
        } leads to (through a symbolic link or ".."): the system names a folder by its real path.`,
      ],
    };
  }
  return {
    ...now,
    notes: [
      `The pane's process is in ${JSON.stringify(now.cwd)}, not ${
        JSON.stringify(requested)
      }: tmux starts elsewhere when it cannot enter the directory (missing, or not permitted), or the command changed directory.`,
    ],
  };
}

/**
 * Whether the folder `requested` is `cwd` by its real path (a symbolic link, a `..`), which is
 * how the system names a process's folder: asked of `/bin/sh` on the tmux server's machine,
 * where the pane is. False when it cannot be told (a name not read exactly, the pane gone).
 */
async function leadsTo(
  ctx: TmuxContext,
  paneId: string,
  requested: string,
  cwd: string,
): Promise<boolean> {
  if (cwd === "" || cwd.includes(UNDECODABLE) || requested.includes(UNDECODABLE)) return false;
  const test = `[ "$(cd -P -- ${shellQuote(requested)} 2>/dev/null && pwd -P)" = ${
    shellQuote(cwd)
  } ]`;
  try {
    return await shellSays(ctx.runner, ctx.address, paneId, escapeFormat(test), ctx.signal);
  } catch (error) {
    if (error instanceof TmuxError && error.kind === "no-target") return false;
    throw error;
  }
}

/**
 * How long {@link startedIn} waits for a new pane's child to start its program before it
 * judges the folder it is in.
 */
export const START_WAIT_MS = 3_000;

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
