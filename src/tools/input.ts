/**
 * Input: typing into panes, pasting, and running shell commands. Toolset execute.
 *
 * Every tool here passes the input guards first (guards.ts): never the caller's own pane
 * (unless `force`), never a pane a person is watching (unless the server was started with
 * `--allow-attended-input`), never a dead pane or one in copy mode (or any mode), and never a
 * synchronized window where any pane of the cohort is guarded.
 *
 * `send_keys` keeps text and key names apart on purpose: `text` is typed exactly as given
 * (`"C-c"` is three characters), `keys` are tmux key names, each checked against tmux's own
 * parser so a typo is refused instead of arriving as text.
 *
 * @module
 */

import { z } from "zod";
import { byteLength, cutString } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { failureText, ToolFailure } from "../mcp/errors.ts";
import { deliverInput, guardInput, type InputGuardOptions, Unconfirmed } from "../mcp/guards.ts";
import { requireOwned } from "../mcp/ownership.ts";
import { KEY_CHARACTER, nameCharacter, pasteTransient } from "./buffers.ts";
import { defineTool, type ToolAnnotations, type ToolRegistry } from "../mcp/registry.ts";
import { checkedString, count, int, paneIdSchema } from "../mcp/schemas.ts";
import { describeKeyRefusals, MAX_KEY_NAME, refusedKeys } from "../tmux/keys.ts";
import { execFast } from "../tmux/control.ts";
import { randomHex } from "../tmux/format.ts";
import { TmuxError, type TmuxRunner } from "../tmux/run.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { shellHoldsTerminal } from "../tmux/foreground.ts";
import { shellSays } from "../tmux/if_shell.ts";
import {
  isShellCommand,
  lineEditorReads,
  OTHER_SHELLS,
  POSIX_SHELLS,
  shellName,
} from "../tmux/prompt.ts";
import { jobIdOf, jobIdSchema, type JobRef, parseJobId } from "./job_id.ts";
import { endMarker, markerWords } from "./job_markers.ts";
import {
  endSeen,
  HELD_NOTE,
  isOver,
  type JobView,
  type MarkedRead,
  readJob,
  readMarked,
} from "./job_state.ts";
import { recheckBy } from "./job_wait.ts";
import { MAX_START_SKEW_MS, placeOf, rememberJob } from "./job_resource.ts";
import {
  markFree,
  markFreeFormat,
  markHeldFormat,
  markValue,
  parseMark,
  readMark,
  setMarkCommand,
  swapMark,
  waitedOn,
} from "./run_mark.ts";
import {
  awaitFirstOutput,
  clampTimeout,
  keepTail,
  MAX_TIMEOUT_MS,
  paneEnded,
  type PaneProbe,
  PaneWatch,
  probePane,
  timeoutField,
} from "./wait.ts";

/** Annotations of a tool that types into a pane: it changes the world, and repeating it does too. */
const TYPES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

/** Longest text `send_keys` types (it travels as one argument); longer goes by paste_text. */
const MAX_TEXT_BYTES = 32_768;
/** Longest text `paste_text` pastes. */
const MAX_PASTE_CHARS = 1_000_000;
/** Most key names in one call. */
const MAX_KEYS = 64;
/** Most operations in one batch. */
const MAX_OPERATIONS = 64;
/** Longest command `run_command` runs. */
const MAX_COMMAND_CHARS = 65_536;

/** Names this server's lifetime for per-server caches: socket plus server pid. */
function serverKey(ctx: TmuxContext, snapshot: Snapshot): string {
  return `${ctx.socketLabel}#${snapshot.server?.pid ?? 0}`;
}

const forceField = z.boolean().optional();

// ---------------------------------------------------------------------------------------------
// send_keys

const sendInput = {
  paneId: paneIdSchema,
  text: z.string().max(MAX_TEXT_BYTES).optional(),
  keys: z.array(checkedString(MAX_KEY_NAME)).max(MAX_KEYS).optional(),
  enter: z.boolean().optional(),
  force: forceField,
};

const sentSchema = z.strictObject({
  paneId: paneIdSchema,
  text: z.string().nullable().describe("The text typed (cut to 4 KB here), or null."),
  textBytes: count().describe("UTF-8 bytes of text typed."),
  textOmittedBytes: count().describe("Bytes of the typed text left out of this echo."),
  keys: z.array(z.string()).describe("Key names pressed, in order."),
  enter: z.boolean().describe("Whether Enter was pressed last."),
  reachedPanes: z.array(paneIdSchema).describe(
    "Every pane the input reached: more than one when the window has synchronize-panes on.",
  ),
});

type SendArgs = {
  paneId: string;
  text?: string;
  keys?: string[];
  enter?: boolean;
  force?: boolean;
};
type Sent = z.infer<typeof sentSchema>;

/**
 * Refuses text tmux would not deliver as given, instead of reporting it sent: tmux ends an
 * argument at a NUL (the rest never arrives), and a lone surrogate has no UTF-8 form (a
 * replacement character would arrive instead).
 */
function checkDeliverable(what: string, text: string, hint: string): void {
  if (text.includes("\0")) {
    throw new ToolFailure(
      `${what} holds a NUL character; tmux would cut the text there and nothing after it would arrive.`,
      hint,
    );
  }
  if (!text.isWellFormed()) {
    throw new ToolFailure(
      `${what} is not well-formed Unicode (a lone surrogate), so it cannot arrive as given.`,
      hint,
    );
  }
}

/** Guards, checks key names, then types text, presses keys and Enter in one tmux call. */
async function sendOne(
  ctx: TmuxContext,
  snapshot: Snapshot,
  op: SendArgs,
  echoBytes = 4_096,
): Promise<Sent> {
  const nothingSent = 'Nothing was sent. A NUL byte is the key "C-Space" in keys.';
  if (op.text !== undefined) checkDeliverable("text", op.text, nothingSent);
  for (const key of op.keys ?? []) checkDeliverable("A key name", key, nothingSent);
  const pane = ctx.pane(snapshot, op.paneId);
  const keys = op.keys ?? [];
  const enter = op.enter ?? op.text !== undefined;
  if (op.text === undefined && keys.length === 0 && !enter) {
    throw new ToolFailure(
      "Nothing to send.",
      "Give text (typed as is), keys (tmux key names such as C-c) or enter: true.",
    );
  }
  const textBytes = op.text === undefined ? 0 : byteLength(op.text);
  if (textBytes > MAX_TEXT_BYTES) {
    throw new ToolFailure(
      `text is ${textBytes} bytes; send_keys types at most ${MAX_TEXT_BYTES}.`,
      "paste_text pastes longer text in one go.",
    );
  }
  guardInput(ctx, snapshot, pane, { force: op.force });
  if (keys.length > 0) {
    const refused = await refusedKeys(
      ctx.runner,
      ctx.address,
      serverKey(ctx, snapshot),
      keys,
      ctx.signal,
    );
    if (refused.length > 0) {
      const { message, hint } = describeKeyRefusals(refused);
      throw new ToolFailure(message, hint);
    }
  }
  const commands: string[][] = [];
  if (op.text !== undefined && op.text !== "") {
    // A newline cannot travel inside an argument on the control connection's line (it ends
    // the line): each one goes as its own key, by its hex code (the same byte `-l` would
    // type), so long text with newlines is not pushed onto a tmux process's 16 KB line.
    op.text.split("\n").forEach((part, i) => {
      if (i > 0) commands.push(["send-keys", "-t", pane.id, "-H", "0a"]);
      if (part !== "") commands.push(["send-keys", "-t", pane.id, "-l", "--", part]);
    });
  }
  if (keys.length > 0) commands.push(["send-keys", "-t", pane.id, "--", ...keys]);
  if (enter) commands.push(["send-keys", "-t", pane.id, "Enter"]);
  const reached = commands.length > 0
    ? await deliverInput(ctx, snapshot, pane, { force: op.force }, commands)
    : guardInput(ctx, snapshot, pane, { force: op.force }).map((p) => p.id);
  if (commands.length > 0) typedInto(ctx, snapshot, reached);
  const shown = op.text === undefined ? null : cutString(op.text, echoBytes);
  return {
    paneId: pane.id,
    text: shown?.text ?? null,
    textBytes,
    textOmittedBytes: shown?.omittedBytes ?? 0,
    keys,
    enter,
    reachedPanes: reached,
  };
}

function describeSent(sent: Sent): string {
  const parts = [];
  if (sent.text !== null) parts.push(`${sent.textBytes} bytes of text`);
  if (sent.keys.length > 0) parts.push(`keys ${sent.keys.join(" ")}`);
  if (sent.enter) parts.push("Enter");
  const also = sent.reachedPanes.length > 1
    ? ` (synchronized: reached ${sent.reachedPanes.join(", ")})`
    : "";
  return `Sent ${parts.join(", then ") || "nothing"} to ${sent.paneId}${also}.`;
}

const sendKeys = defineTool({
  name: "send_keys",
  title: "Send keys to a pane",
  toolset: "execute",
  description: "Type text literally, then keys (tmux names: C-c, Enter, Up, M-x), then Enter " +
    "(default: after text). Refuses this server's own pane (unless force), watched, dead " +
    "and in-mode panes. For output and exit status: run_command.",
  input: sendInput,
  output: sentSchema.shape,
  annotations: TYPES,
  async run(args, ctx) {
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const sent = await sendOne(ctx, snapshot, args);
    return { data: sent, summary: describeSent(sent) };
  },
});

// ---------------------------------------------------------------------------------------------
// send_keys_batch

const batchRow = z.strictObject({
  index: count(),
  paneId: paneIdSchema,
  status: z.enum(["sent", "failed", "skipped"]).describe(
    "skipped: not attempted because an earlier row failed and onError is stop.",
  ),
  error: z.string().nullable(),
  sent: sentSchema.nullable(),
});

const sendKeysBatch = defineTool({
  name: "send_keys_batch",
  title: "Send keys to panes, in order",
  toolset: "execute",
  description:
    `Up to ${MAX_OPERATIONS} send_keys calls in order; onError stop (default) or continue.`,
  input: {
    operations: z.array(z.strictObject(sendInput)).min(1).max(MAX_OPERATIONS),
    onError: z.enum(["stop", "continue"]).optional(),
  },
  output: {
    results: z.array(batchRow),
    stoppedAt: int().nullable().describe("Index of the row that stopped the batch, or null."),
    sent: count(),
    failed: count(),
    skipped: count(),
  },
  annotations: TYPES,
  async run(args, ctx) {
    const onError = args.onError ?? "stop";
    // Each row echoes what it typed, or why it failed: all of them within the result bound.
    const perRow = Math.floor((ctx.config.maxResultBytes - 1_024) / args.operations.length) - 400;
    const echoBytes = Math.max(64, Math.min(4_096, perRow));
    const errorChars = Math.max(200, Math.min(2_000, perRow));
    const results: z.infer<typeof batchRow>[] = [];
    let stoppedAt: number | null = null;
    for (const [index, op] of args.operations.entries()) {
      if (stoppedAt !== null || ctx.signal.aborted) {
        results.push({ index, paneId: op.paneId, status: "skipped", error: null, sent: null });
        continue;
      }
      try {
        const sent = await sendOne(ctx, await ctx.guardSnapshot(op.paneId), op, echoBytes);
        results.push({ index, paneId: op.paneId, status: "sent", error: null, sent });
      } catch (error) {
        const text = cutString(failureText(error, ctx.address), errorChars).text;
        results.push({ index, paneId: op.paneId, status: "failed", error: text, sent: null });
        if (onError === "stop") stoppedAt = index;
      }
    }
    const tally = (s: string) => results.filter((r) => r.status === s).length;
    const data = {
      results,
      stoppedAt,
      sent: tally("sent"),
      failed: tally("failed"),
      skipped: tally("skipped"),
    };
    return {
      data,
      summary: `Batch: ${data.sent} sent, ${data.failed} failed, ${data.skipped} skipped${
        stoppedAt !== null ? ` (stopped at row ${stoppedAt})` : ""
      }.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// paste_text

/**
 * Refuses text that would not stay text inside a paste: a control character would act as a
 * key (ESC could end the bracketed paste and turn the rest into keystrokes). `\r\n` is
 * taken as a newline; anything else is refused with its position, so nothing is removed
 * behind the caller's back.
 */
export function pastableText(text: string): string {
  const normalized = text.replaceAll("\r\n", "\n");
  const m = KEY_CHARACTER.exec(normalized);
  if (m) {
    throw new ToolFailure(
      `text holds ${nameCharacter(m[0])} at character ${m.index}: a control character in a ` +
        "paste acts as a key (ESC can end a bracketed paste early), so nothing was pasted.",
      "Remove control characters (strip ANSI colour codes first); to press keys, use " +
        'send_keys with keys (e.g. ["Escape"], ["C-c"]).',
    );
  }
  return normalized;
}

/**
 * The refusal of a keystroke meant for a shell at its prompt because the shell did not hold its
 * terminal at that instant, or was busy itself (in `wait`): nothing was typed (the check travels
 * with the keys), so the step may be tried again ({@link whileShellAway}).
 */
class ShellAway extends ToolFailure {}

/**
 * The refusal of a guard that tested both at once (see {@link shellGuard}): the shell did not
 * hold its terminal, or was busy itself. Which one, a second look tells ({@link whichAway}).
 */
class AwayOrBusy extends ShellAway {
  constructor(readonly away: ShellAway, readonly busy: ShellAway) {
    super(away.message, away.hint);
  }
}

/**
 * The guard of a keystroke meant for a shell at its prompt: process `holds` must hold the
 * pane's terminal at that instant (foreground.ts), and tmux must still name `command`.
 * `idle`: and the shell must not be busy itself (in `wait`, a loop of builtins: shellIdle).
 * Both are one shell condition (one `/bin/sh` for tmux to start on every guarded key); its
 * refusal is an {@link AwayOrBusy}, told apart only when it is given ({@link whichAway}).
 */
function shellGuard(
  pane: PaneRow,
  holds: number,
  command: string | undefined,
  force: boolean | undefined,
  idle = false,
): InputGuardOptions {
  const hint = 'Wait for it to end (wait_for_text), interrupt it (send_keys keys: ["C-c"]), or ' +
    "use another pane (split_window or create_window).";
  const away = new ShellAway(
    `Pane ${pane.id}'s shell (pid ${holds}) is not what reads the keyboard: a program ` +
      "it started is in the foreground (perhaps one named like the shell, such as a " +
      "script waiting in read). Nothing was typed.",
    hint,
  );
  const busy = new ShellAway(
    `Pane ${pane.id}'s shell (pid ${holds}) is busy itself, not at its prompt: it runs ` +
      "a builtin such as wait (for its & jobs) or a loop. Nothing was typed.",
    hint.replace("wait_for_text", "wait_for_idle with atPrompt"),
  );
  return {
    force,
    command,
    shellConditions: [
      { target: pane.id, format: shellHoldsTerminal(holds, { idle }), shell: true },
    ],
    shellRefusals: [idle ? new AwayOrBusy(away, busy) : away],
  };
}

/**
 * The refusal that applies of an {@link AwayOrBusy} (any other as it is): the shell `holds`
 * holds its terminal now, so it was busy itself; else a program it started holds it.
 */
async function whichAway(
  ctx: TmuxContext,
  paneId: string,
  holds: number,
  refusal: ShellAway,
): Promise<ShellAway> {
  if (!(refusal instanceof AwayOrBusy)) return refusal;
  const held = await shellSays(
    ctx.runner,
    ctx.address,
    paneId,
    shellHoldsTerminal(holds),
    ctx.signal,
  );
  return held ? refusal.busy : refusal.away;
}

/**
 * Pastes `text` into `pane` after `before` (keys that prepare the pane), through a transient
 * buffer ({@link pasteTransient}), guarded as any input: tmux re-checks at the instant of the
 * paste that nobody watches the pane. Returns the panes reached.
 */
async function pasteViaBuffer(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  text: string,
  options: {
    enter: boolean;
    keepNewlines: boolean;
    force?: boolean;
    before?: string[][];
    /** The pid that must hold the pane's terminal at the instant of the paste. */
    holds?: number;
    /** What tmux must name the pane's program at the instant of the paste. */
    command?: string;
    /** A claim on the pane the paste needs (see InputGuardOptions). */
    claim?: InputGuardOptions["claim"];
  },
): Promise<string[]> {
  const guard: InputGuardOptions = options.holds === undefined
    ? { force: options.force, paste: true, claim: options.claim }
    : {
      ...shellGuard(pane, options.holds, options.command, options.force),
      paste: true,
      claim: options.claim,
    };
  return await pasteTransient(ctx, snapshot, pane, text, {
    guard,
    bracketed: true,
    keepNewlines: options.keepNewlines,
    enter: options.enter,
    before: options.before,
  });
}

const pasteText = defineTool({
  name: "paste_text",
  title: "Paste text into a pane",
  toolset: "execute",
  description:
    "Paste text (bracketed if asked), Enter if enter; control characters refused. Guarded " +
    "as send_keys.",
  input: {
    paneId: paneIdSchema,
    text: z.string().min(1).max(MAX_PASTE_CHARS),
    enter: z.boolean().optional(),
    force: forceField,
  },
  output: {
    paneId: paneIdSchema,
    bytes: count().describe("UTF-8 bytes pasted."),
    enter: z.boolean(),
    reachedPanes: z.array(paneIdSchema),
  },
  annotations: TYPES,
  async run(args, ctx) {
    checkDeliverable("text", args.text, "Nothing was pasted.");
    const text = pastableText(args.text);
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const pane = ctx.pane(snapshot, args.paneId);
    guardInput(ctx, snapshot, pane, { force: args.force });
    const enter = args.enter ?? false;
    const reached = await pasteViaBuffer(ctx, snapshot, pane, text, {
      enter,
      keepNewlines: false,
      force: args.force,
    });
    typedInto(ctx, snapshot, reached);
    const bytes = byteLength(text);
    return {
      data: { paneId: pane.id, bytes, enter, reachedPanes: reached },
      summary: `Pasted ${bytes} bytes into ${pane.id}${enter ? ", then Enter" : ""}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// run_command

function requirePosixShell(paneId: string, command: string): string {
  const name = shellName(command);
  if (POSIX_SHELLS.has(name)) return name;
  if (OTHER_SHELLS.has(name)) {
    throw new ToolFailure(
      `Pane ${paneId} runs ${name}, which is not a POSIX shell: run_command's wrapper (printf, ` +
        "eval and $?) needs sh, bash, zsh, dash or ksh.",
      "Use send_keys and wait_for_text in that pane, or start a POSIX shell in another pane " +
        "(split_window or create_window).",
    );
  }
  throw new ToolFailure(
    `Pane ${paneId} is running ${JSON.stringify(command)}, not a shell at its prompt; ` +
      "run_command types into a shell.",
    'Wait for it to finish (wait_for_text), interrupt it (send_keys keys: ["C-c"]), or use ' +
      "a pane running a POSIX shell (split_window or create_window).",
  );
}

/** Bytes that travel as themselves in the typed command; everything else as `\0ooo`. */
const PLAIN = /^[A-Za-z0-9 ,._+:@%/=-]$/;

/**
 * The command as `printf %b` units: plain ASCII as itself, every other byte as an octal
 * escape. The typed line then holds no quote, `!` (bash history expansion), `#`, `$`,
 * backtick, tab (completion) or newline of the command's own, whatever the command is.
 */
function printfUnits(command: string): string[] {
  const units: string[] = [];
  for (const byte of new TextEncoder().encode(command)) {
    const ch = String.fromCharCode(byte);
    units.push(byte < 0x80 && PLAIN.test(ch) ? ch : `\\0${byte.toString(8).padStart(3, "0")}`);
  }
  return units;
}

/**
 * Longest line typed at once: busybox sh's line editor keeps about 1 023 bytes of a line and
 * drops the rest without a word (a shell without line editing reads at most 4 095).
 */
const MAX_TYPED_LINE = 960;
/** Longest piece of a long command a line holds (with its assignment: under MAX_TYPED_LINE). */
const MAX_PIECE = 900;

/**
 * What is typed at the prompt. The markers are printed by printf from two separate words, so
 * the echo of this very line never contains them; only running it does. A leading space keeps
 * it out of history in bash (HISTCONTROL=ignorespace/ignoreboth) and zsh (HIST_IGNORE_SPACE).
 *
 * The line starts no process the command does not: a command of plain bytes only is typed as
 * itself; otherwise bash decodes it with `printf -v` into a variable (removed after the end
 * marker), and other shells by `$(printf %b ...)`, whose subshell POSIX offers no way around.
 */
export function typedCommand(command: string, nonce: string, shell = "sh"): string {
  const units = printfUnits(command);
  // A syntax error inside a plain eval aborts the whole typed line in an interactive POSIX
  // shell, end marker included; `command eval` keeps the line going (POSIX: command strips a
  // special builtin's power to abort). zsh's `command` runs only external programs, and zsh's
  // eval does not abort the line: plain eval there.
  // Words typed quoted (`\eval`) are never taken for an alias of the person's shell (an alias
  // `command=echo` would print the command and report status 0).
  const evaluate = shell === "zsh" ? "\\eval" : "\\command eval";
  const markers = markerWords(nonce);
  const payload = units.join("");
  const plain = payload.length === units.length;
  const bash = shell === "bash";
  /** The words that run the command, given its units as one shell word. */
  const run = (word: string) =>
    plain
      ? `${evaluate} ${word}`
      : bash
      ? `\\printf -v ${VARIABLE} %b ${word}; ${evaluate} "$${VARIABLE}"`
      : `${evaluate} "$(\\printf %b ${word})"`;
  const tail = bash && !plain ? `; unset ${VARIABLE}` : "";
  const line = ` ${markers.begin}; ${run(`'${payload}'`)}; ${markers.end}${tail}`;
  if (line.length + 2 <= MAX_TYPED_LINE) return line;
  // Too long for one line: build it up in a variable, a line at a time.
  const lines = [` ${VARIABLE}=''`];
  let chunk = "";
  for (const unit of units) {
    if (chunk.length + unit.length > MAX_PIECE) {
      lines.push(` ${VARIABLE}="$${VARIABLE}"'${chunk}'`);
      chunk = "";
    }
    chunk += unit;
  }
  if (chunk !== "") lines.push(` ${VARIABLE}="$${VARIABLE}"'${chunk}'`);
  lines.push(` ${markers.begin}; ${run(`"$${VARIABLE}"`)}; ${markers.end}; unset ${VARIABLE}`);
  return lines.join("\n");
}

/** The shell variable a long or (in bash) decoded command is held in while it runs. */
const VARIABLE = "__tmux_mcp_cmd";

/**
 * Whether the pane shows text on a row below its cursor. Right after a command's end marker
 * and the prompt, the rows below are blank, unless the command moved the cursor up over its
 * own output (which the marker and the prompt then partly overwrote).
 */
async function textBelowCursor(ctx: TmuxContext, paneId: string): Promise<boolean> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{cursor_y}",
    ";",
    "capture-pane",
    "-p",
    "-t",
    paneId,
  ], { signal: ctx.signal });
  if (result.code !== 0) return false;
  const [first, ...rows] = new TextDecoder().decode(result.stdout).split("\n");
  const y = Number(first);
  if (!Number.isSafeInteger(y)) return false;
  return rows.slice(y + 1).some((row) => row.trim() !== "");
}

/** How long the shell may take to show a fresh prompt after C-c. */
const FRESH_PROMPT_MS = 1_000;

/**
 * How long a program the shell runs to draw its prompt (PROMPT_COMMAND, a `$(...)` in PS1 such
 * as a git branch, zsh's precmd) may hold the terminal before run_command gives up typing: a
 * git prompt in a large repository takes about a second.
 */
const PROMPT_PROGRAM_MS = 2_000;

/**
 * How long a shell (by name) in a process group of its own must hold the terminal before it is
 * taken for a nested shell: longer than a child the shell forked takes to exec its program.
 */
const NESTED_SHELL_MS = 150;

/**
 * A `/bin/sh` command for `if-shell` that exits 0 when the terminal of process `pid` (a pane's
 * own process, the leader of its session and group) is held by another process group: a
 * program the shell started as a job (not one of its own group, such as a `$(...)` of its
 * prompt). Linux: field tpgid of `/proc/PID/stat`, read after the command name's last `)` (see
 * foreground.ts); elsewhere `ps`.
 */
function otherGroupHolds(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new RangeError(`not a pid: ${pid}`);
  return `if [ -r /proc/${pid}/stat ]; then s=; ` +
    `{ while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done; } < /proc/${pid}/stat ` +
    `|| exit 1; while case $s in *")"*) true ;; *) false ;; esac; do s=\${s#*)}; done; ` +
    `set -- $s; t=$6; else t=$(ps -o tpgid= -p ${pid}) || exit 1; set -- $t; t=$1; fi; ` +
    `[ -n "$t" ] && [ "$t" -gt 0 ] 2>/dev/null && [ "$t" != ${pid} ]`;
}

/**
 * The name of the shell that holds `pane`'s terminal in a process group of its own (tmux names
 * a group's leader), or null: what a nested interactive shell (`bash` typed in bash, `su`,
 * `nix-shell`) looks like, and a shell script run as a command too.
 */
async function foregroundShell(ctx: TmuxContext, pane: PaneRow): Promise<string | null> {
  const yes = `tmux-mcp-nested-${randomHex(8)}:`;
  const result = await execFast(ctx.runner, ctx.address, [
    "if-shell",
    "-t",
    pane.id,
    otherGroupHolds(pane.pid),
    `display-message -p -t ${pane.id} "${yes}#{pane_current_command}"`,
  ], { signal: ctx.signal });
  if (result.code !== 0) return null;
  const line = new TextDecoder().decode(result.stdout).split("\n").find((l) => l.startsWith(yes));
  if (line === undefined) return null;
  const name = shellName(line.slice(yes.length));
  return POSIX_SHELLS.has(name) || OTHER_SHELLS.has(name) ? name : null;
}

/** The refusal for a nested shell `name` holding `pane`'s terminal. */
function nestedShellRefusal(pane: PaneRow, name: string): ToolFailure {
  return new ToolFailure(
    `Pane ${pane.id}'s shell (pid ${pane.pid}) is not what reads the keyboard: a shell it ` +
      `started (${name}) holds the terminal: a nested interactive shell (${name} run at the ` +
      "prompt, su, nix-shell) or a shell script. run_command types only into the pane's own " +
      "shell, and C-c does not end a nested shell. Nothing was typed.",
    'A nested shell: end it with send_keys text "exit" to return to the pane\'s own shell, ' +
      "or type into it with send_keys and wait_for_text; a script: wait for it or interrupt it " +
      '(send_keys keys: ["C-c"]); or use another pane (split_window or create_window).',
  );
}

/**
 * Runs `attempt`, a step guarded by {@link shellGuard}, again every 20 ms while it is refused
 * only because the pane's shell does not hold its terminal, until `until`: the check travels
 * with the keys in the same tmux step, so a refused attempt typed nothing. The shell runs the
 * programs that draw its prompt (PROMPT_COMMAND, a `$(...)` in PS1, zsh's precmd) with the
 * terminal theirs for a moment, every time it draws one, and run_command's own C-c makes it
 * draw one. `refused` is told of each refusal (it may throw a better one, as for a nested
 * shell) and, when the time is up, gives the refusal thrown.
 */
async function whileShellAway<T>(
  ctx: TmuxContext,
  until: number,
  attempt: () => Promise<T>,
  refused: (away: ShellAway, last: boolean) => Promise<Error>,
): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ShellAway)) throw error;
      const last = performance.now() >= until;
      const failure = await refused(error, last);
      if (last) throw failure;
      await sleep(20, ctx.signal);
    }
  }
}

/**
 * Brings the pane's shell to a fresh prompt before run_command types: text left on the line,
 * a line the shell holds as unfinished (an unclosed quote, a trailing backslash, an open `for`:
 * its continuation prompt, PS2), and a line editor left in vi command mode would each take the
 * typed command in and run it with other words, or not at all. No editing key reaches all of
 * them; C-c does, in every POSIX shell: the terminal sends SIGINT to its foreground group, and
 * a shell at its prompt drops the pending input and starts a new prompt (in vi insert mode).
 *
 * SIGINT goes to the terminal's foreground group: it is sent only when the pane's shell holds
 * the terminal at that instant, with no program of its own group reading it (the same test as
 * the typing; tmux checks it in the same command line), so no program the shell started gets
 * it. What it can reach: a script that is itself the pane's process and waits in `read` (it is
 * interrupted instead of answered with the typed command), a `read` typed at the prompt, and a
 * trap on INT.
 *
 * The shell handles the signal some time after the keystroke: input that arrives before it
 * has, is taken into the line it then drops (bash loses the first characters of the command).
 * So the typing waits until the shell has moved the cursor to a new row (the new prompt), at
 * most {@link FRESH_PROMPT_MS}; a shell that shows nothing new by then (one that ignores
 * SIGINT) has handled it or never will, and is typed into as it is (the paste's keys still
 * empty its line).
 *
 * A program drawing the prompt (a command substitution in PS1, PROMPT_COMMAND) holds the
 * terminal for a moment: a refusal for that is tried again, until `until` (the check travels
 * with the key, so the common case costs one guarded step). A shell of another process group
 * holding the terminal for {@link NESTED_SHELL_MS} is a nested shell: refused at once, as C-c
 * would not end it; so is a program that input typed just before started (`byInput`, see
 * {@link typedProgram}).
 */
async function freshPrompt(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  now: PaneProbe,
  force: boolean | undefined,
  until: number,
  byInput: (command: string) => Promise<boolean>,
  mark: { readonly set: string[]; readonly claim: NonNullable<InputGuardOptions["claim"]> },
): Promise<void> {
  // Refused where tmux would copy the key to other panes (as the paste that follows is).
  // The shell itself busy (in `wait` for its & jobs): C-c would interrupt it, and the typing
  // would be read by whatever it runs next. The run mark is taken in the same step.
  const guard = {
    ...shellGuard(pane, pane.pid, now.command, force, true),
    paste: true,
    claim: mark.claim,
  };
  // The screen row above the cursor: where the cursor cannot move down (the bottom row, and a
  // history that does not grow: history-limit 0, or full and trimmed), the new prompt shows as
  // the rows scrolling instead. The terminal's own `^C` echo stays on the cursor's row.
  const rowAbove = async (p: PaneProbe) =>
    p.cursorY === 0 ? null : new TextDecoder().decode(
      await ctx.run([
        "capture-pane",
        "-p",
        "-t",
        pane.id,
        "-S",
        String(p.cursorY - 1),
        "-E",
        String(p.cursorY - 1),
      ]),
    );
  let before!: PaneProbe;
  let above: string | null = null;
  let nestedSince: number | null = null;
  await whileShellAway(ctx, until, async () => {
    before = await probePane(ctx, pane.id);
    above = await rowAbove(before);
    await deliverInput(ctx, snapshot, pane, guard, [mark.set, ["send-keys", "-t", pane.id, "C-c"]]);
  }, async (away, last) => {
    // Refused all along: perhaps another run_command's command holds the terminal.
    if (last) {
      const taken = await mark.claim.refusal();
      if (taken) throw taken;
    }
    const nested = await foregroundShell(ctx, pane);
    if (nested === null) {
      nestedSince = null;
      // Nothing was typed: what holds the terminal is no prompt this C-c made the shell draw.
      // A program that input typed before started is refused at once.
      const p = await probePane(ctx, pane.id);
      if (p.exists && await byInput(p.command)) requirePosixShell(pane.id, p.command);
      return last ? await whichAway(ctx, pane.id, pane.pid, away) : away;
    }
    nestedSince ??= performance.now();
    if (last || performance.now() - nestedSince >= NESTED_SHELL_MS) {
      throw nestedShellRefusal(pane, nested);
    }
    return away;
  });
  const row = (p: PaneProbe) => p.historySize + p.cursorY;
  const end = performance.now() + FRESH_PROMPT_MS;
  while (performance.now() < end) {
    const p = await probePane(ctx, pane.id);
    if (paneEnded(before, p) || row(p) !== row(before)) return;
    if (above !== null && p.cursorY === before.cursorY && await rowAbove(p) !== above) return;
    await sleep(2, ctx.signal);
  }
}

/** Waits `ms`, or until `signal` aborts (then throws the cancellation). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new TmuxError("cancelled", "cancelled"));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TmuxError("cancelled", "cancelled"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A command started by run_command, as long as it may still be running. */
interface RunState {
  /** Its job, once the call has read where the pane is (null until then: nothing typed yet). */
  ref: JobRef | null;
  readonly command: string;
  /** When the call started (ms since the epoch). */
  readonly since: number;
  /** A call is waiting on it right now (or checking it): nobody else may start one. */
  attached: boolean;
}

/** What lifts a busy pane's refusal (naming the job when there is one to wait for). */
function busyHint(jobId?: string): string {
  return `Wait for it to end (get_command_result with ${jobId ? `jobId ${jobId} and ` : ""}` +
    'waitMs) or interrupt it (send_keys keys: ["C-c"]), then run_command again; if C-c does ' +
    "not end it, respawn_pane with kill: true kills what runs in the pane and starts its " +
    "command afresh.";
}

/** The refusal of a pane this process runs a command in (`run`). */
function busyRefusal(paneId: string, run: RunState): ToolFailure {
  const since = Math.round((Date.now() - (run.ref?.startMs ?? run.since)) / 1000);
  return new ToolFailure(
    `Pane ${paneId} is still running an earlier run_command (${
      JSON.stringify(cutString(run.command, 80).text)
    }, started ${since} s ago, ${run.ref ? `job ${jobIdOf(run.ref)}` : "being typed"}).`,
    busyHint(),
  );
}

/**
 * The refusal of pane `paneId` whose run mark `value` names a command another run_command typed
 * (in another process, or in this one before a restart) that is not over; null when the mark is
 * stale: no mark of a job in this pane on this server (pid `serverPid`), the job `over` (found
 * over just now), or a job that is over (jobs.ts `readJob`). A job read as lost only because the
 * shell waits quiet as at its prompt (a `read` in the command looks the same) is not over while
 * the call that runs it still waits on it.
 */
async function markRefusal(
  ctx: TmuxContext,
  paneId: string,
  serverPid: number | undefined,
  value: string,
  over: string | null,
): Promise<ToolFailure | null> {
  const mark = value === "" ? null : parseMark(value);
  const ref = mark === null ? null : parseJobId(mark.jobId);
  if (mark === null || ref === null || mark.jobId === over || ref.paneId !== paneId) return null;
  if (ref.serverPid !== serverPid || ref.startMs > Date.now() + MAX_START_SKEW_MS) return null;
  const view = await readJob(ctx, ref);
  const waiting = waitedOn(mark, MAX_TIMEOUT_MS);
  if (isOver(view) && (endSeen(ref, view) || !waiting)) return null;
  const since = Math.round(Math.max(0, Date.now() - ref.startMs) / 1000);
  const more = waiting ? Math.ceil((mark.waitedOnUntil! - Date.now()) / 1000) : 0;
  return new ToolFailure(
    `Pane ${paneId} is busy with a command another run_command typed (job ${mark.jobId}, ` +
      `started ${since} s ago${
        waiting ? `; the call that runs it waits on it ${more} s more` : ""
      }): a command typed now would be read by it, or interrupt it. Nothing was typed.`,
    busyHint(mark.jobId),
  );
}

/** The refusal of a pane another run_command took at the instant (its mark now `value`). */
function takenRefusal(paneId: string, value: string): ToolFailure {
  const jobId = parseMark(value)?.jobId;
  return new ToolFailure(
    `Pane ${paneId} was taken by another run_command at that instant${
      jobId ? ` (job ${jobId})` : ""
    }. Nothing was typed.`,
    jobId
      ? `get_command_result with jobId ${jobId} and waitMs waits for it to end; then run_command again.`
      : "Try again.",
  );
}

const runs = new WeakMap<TmuxRunner, Map<string, RunState>>();

function runsFor(runner: TmuxRunner): Map<string, RunState> {
  let map = runs.get(runner);
  if (!map) {
    map = new Map();
    runs.set(runner, map);
  }
  return map;
}

/**
 * When run_command last saw a command of its own end in a pane, or send_keys or paste_text last
 * typed into it (performance.now(); `typed` for the latter), by key: the moments after which the
 * pane's shell may be drawing a prompt, or handing the terminal back.
 */
const ends = new WeakMap<TmuxRunner, Map<string, { at: number; typed: boolean }>>();

function endsFor(runner: TmuxRunner): Map<string, { at: number; typed: boolean }> {
  let map = ends.get(runner);
  if (!map) {
    map = new Map();
    ends.set(runner, map);
  }
  return map;
}

/** Notes that input was typed into `paneIds` now (see {@link afterPromptPrograms}). */
function typedInto(ctx: TmuxContext, snapshot: Snapshot, paneIds: readonly string[]): void {
  const server = serverKey(ctx, snapshot);
  for (const id of paneIds) {
    endsFor(ctx.runner).set(`${server}${id}`, { at: performance.now(), typed: true });
  }
}

/**
 * The name tmux gives a command line (names.c `parse_window_name`): its first word without
 * an `exec `, leading dashes or a directory; a leading `"` (tmux's quoting of a start command
 * that holds spaces) and anything from the next `"` on are dropped.
 */
export function parseWindowName(line: string): string {
  let name = line.startsWith('"') ? line.slice(1) : line;
  const quote = name.indexOf('"');
  if (quote !== -1) name = name.slice(0, quote);
  if (name.startsWith("exec ")) name = name.slice(5);
  name = name.replace(/^[ -]+/, "");
  const space = name.indexOf(" ");
  if (space !== -1) name = name.slice(0, space);
  name = name.replace(/(?<=.)[^\x21-\x7e]+$/, "");
  if (name.startsWith("/")) name = name.replace(/\/+$/, "").split("/").pop() || "/";
  return name;
}

/**
 * The name tmux gives pane `paneId` while its terminal's foreground process group is a dead one:
 * its start command's ({@link parseWindowName}); null when it was started without one (tmux
 * names its shell then, which is judged as any shell).
 */
async function deadGroupName(ctx: TmuxContext, paneId: string): Promise<string | null> {
  const result = await execFast(ctx.runner, ctx.address, [
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{pane_start_command}",
  ], { signal: ctx.signal });
  if (result.code !== 0) return null;
  const line = new TextDecoder().decode(result.stdout).replace(/\n$/, "");
  return line.trim() === "" ? null : parseWindowName(line);
}

/**
 * Whether pane `paneId`, named `command`, runs a program that send_keys or paste_text started:
 * input was typed into it last, within {@link PROMPT_PROGRAM_MS}, and tmux names a program that
 * is not a shell, nor the pane's start command. That name is what tmux gives while the
 * terminal's foreground group is a dead one ({@link deadGroupName}): after an `exit` that ends
 * a nested shell (or the last process of a job whose group leader is gone), until the pane's
 * shell takes the terminal back. Such a program is refused at once (`cat`, `vi`): waiting
 * would not make it a shell.
 */
function typedProgram(
  ctx: TmuxContext,
  key: string,
  paneId: string,
): (command: string) => Promise<boolean> {
  const ended = endsFor(ctx.runner).get(key);
  let dead: Promise<string | null> | undefined;
  return async (command) => {
    if (ended === undefined || !ended.typed || isShellCommand(command)) return false;
    if (performance.now() >= ended.at + PROMPT_PROGRAM_MS) return false;
    dead ??= deadGroupName(ctx, paneId);
    return command !== await dead;
  };
}

/**
 * The pane as probed once the programs drawing its prompt have let go of it. Right after a
 * command ends, its shell runs what draws the next prompt (PROMPT_COMMAND, zsh's precmd), and
 * tmux names that program as the pane's (`sleep`, `git`): a run_command that follows at once
 * would be refused as not typing into a shell. The same after input typed into the pane (an
 * `exit` that ends a nested shell: until the outer shell takes the terminal back, its dead
 * process group is the terminal's, and tmux names the pane's start command instead). Within
 * {@link PROMPT_PROGRAM_MS} of either, a pane whose program is not named like a shell is probed
 * again until it is, except a program typed input started ({@link typedProgram}); any other
 * pane is judged at once.
 */
async function afterPromptPrograms(
  ctx: TmuxContext,
  key: string,
  paneId: string,
  start: PaneProbe,
  deadline: number,
  typed: (command: string) => Promise<boolean>,
): Promise<PaneProbe> {
  const ended = endsFor(ctx.runner).get(key);
  if (ended === undefined || isShellCommand(start.command)) return start;
  const until = Math.min(ended.at + PROMPT_PROGRAM_MS, deadline);
  let latest = start;
  while (
    !isShellCommand(latest.command) && latest.exists && performance.now() < until &&
    !await typed(latest.command)
  ) {
    await sleep(20, ctx.signal);
    latest = await probePane(ctx, paneId);
  }
  return latest;
}

/**
 * The job's view once it is over though its end marker never came: the end read after all, or
 * the pane's shell quiet at a prompt its line editor reads ({@link lineEditorReads}): a
 * person's C-c, or an `exec` in the command, ended it. Null while it may run: a program the
 * shell started holds the terminal (one probe tells, nothing more is read), or the shell waits
 * in a `read` of the command (canonical mode).
 */
async function overWithoutEnd(ctx: TmuxContext, ref: JobRef): Promise<JobView | null> {
  const probe = await probePane(ctx, ref.paneId);
  if (!probe.exists || probe.dead || !isShellCommand(probe.command)) return null;
  const view = await readJob(ctx, ref);
  if (view.state === "exited") return view;
  if (view.state !== "lost" || !view.complete) return null;
  return await lineEditorReads(ctx.runner, ctx.address, ref.paneId, ctx.signal) ? view : null;
}

const runCommand = defineTool({
  name: "run_command",
  title: "Run a shell command in a pane",
  toolset: "execute",
  description: "Run a command in a pane's POSIX shell; returns output (tail), exit status. " +
    "Not done at timeout, or background: a jobId for get_command_result; the pane is " +
    "busy until it ends. Interactive programs: capture_since, send_keys, wait_for_text since.",
  input: {
    paneId: paneIdSchema,
    command: z.string().min(1).max(MAX_COMMAND_CHARS),
    timeoutMs: timeoutField,
    background: z.boolean().optional().describe("Return once typed, with a jobId"),
    force: forceField,
  },
  output: {
    paneId: paneIdSchema,
    exitStatus: int().nullable().describe(
      "The command's exit status (the shell's, if the pane died); null while it runs.",
    ),
    output: z.string().describe("What it printed, between its start and end markers (tail kept)."),
    outputComplete: z.boolean().describe(
      "False when output was cut to the result bound or its start left the pane's history.",
    ),
    omittedBytes: count().describe("Bytes of output cut from the start to fit the bound."),
    timedOut: z.boolean(),
    stillRunning: z.boolean().describe("It did not finish and the pane is still busy with it."),
    paneDied: z.boolean().describe("The pane's shell exited while the command ran."),
    jobId: jobIdSchema.optional().describe(
      "When it had not finished: get_command_result reads it later.",
    ),
    effectiveTimeoutMs: int(),
    timeoutClamped: z.boolean(),
    durationMs: count(),
    transport: z.enum(["control", "polling"]),
  },
  annotations: TYPES,
  async run(args, ctx) {
    const { effective, clamped } = clampTimeout(args.timeoutMs);
    checkDeliverable("The command", args.command, "Nothing was run.");
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const pane = ctx.pane(snapshot, args.paneId);
    const cohort = guardInput(ctx, snapshot, pane, { force: args.force });
    await requireOwned(ctx, cohort, `Running a command in ${pane.id}`);
    if (cohort.length > 1) {
      throw new ToolFailure(
        `Pane ${pane.id} is in window ${pane.windowId} with synchronize-panes on: the command ` +
          `would run in ${cohort.map((p) => p.id).join(", ")} at once.`,
        "Turn synchronize-panes off for that window first, or use send_keys.",
      );
    }
    const table = runsFor(ctx.runner);
    const key = `${serverKey(ctx, snapshot)}${pane.id}`;
    const prior = table.get(key);
    /** A job of this process's found over just now: its mark, if still there, is stale. */
    let overJob: string | null = null;
    if (prior) {
      if (prior.attached || prior.ref === null) throw busyRefusal(pane.id, prior);
      const ref = prior.ref;
      prior.attached = true;
      let over: boolean;
      try {
        over = isOver(await readJob(ctx, ref));
      } finally {
        prior.attached = false;
      }
      if (!over) throw busyRefusal(pane.id, prior);
      if (table.get(key) === prior) table.delete(key);
      const next = table.get(key);
      if (next) throw busyRefusal(pane.id, next);
      overJob = jobIdOf(ref);
    }
    // Taken before anything is awaited: a second call into this pane from this process finds
    // it busy, whichever reaches this point first (the other is refused, naming this one).
    const state: RunState = { ref: null, command: args.command, attached: true, since: Date.now() };
    table.set(key, state);
    const nonce = randomHex(10);
    const began = performance.now();
    let watch: PaneWatch | null = null;
    /** The run mark this call put on the pane (see run_mark.ts), once it has. */
    let mine: string | null = null;
    /** Whether the step that types the command's line was tried, and went through. */
    let typing = false;
    let sent = false;
    try {
      watch = await PaneWatch.open(ctx, pane);
      const ref: JobRef = {
        paneId: pane.id,
        nonce,
        panePid: watch.start.pid,
        startMs: Date.now(),
        startAbs: watch.start.historySize + watch.start.cursorY,
        serverPid: snapshot.server?.pid ?? 0,
      };
      const jobId = jobIdOf(ref);
      state.ref = ref;
      rememberJob(jobId, placeOf(ctx));
      // Another process's run_command in the pane (or this process's before a restart).
      const seen = await readMark(ctx, pane.id);
      const serverPid = snapshot.server?.pid;
      const busy = await markRefusal(ctx, pane.id, serverPid, seen, overJob);
      if (busy) throw busy;
      const deadline = began + effective;
      const byInput = typedProgram(ctx, key, pane.id);
      const settled = await afterPromptPrograms(ctx, key, pane.id, watch.start, deadline, byInput);
      requirePosixShell(pane.id, settled.command);
      // A pane created a moment ago may not have drawn its first prompt yet, and until a
      // program holds its terminal tmux names the command the pane was started with (or the
      // shell that is about to exec it): the program is judged only once it has drawn (read
      // with the watch open; tmux checks it again at the instant of typing).
      const now = await awaitFirstOutput(ctx, pane.id, settled, Math.min(effective, 2_000));
      if (paneEnded(watch.start, now)) {
        throw new ToolFailure(
          `Pane ${pane.id} ended before anything was typed.`,
          "list_panes shows what is left.",
        );
      }
      const shell = requirePosixShell(pane.id, now.command);
      const typed = typedCommand(args.command, nonce, shell);
      const drawn = () => Math.min(performance.now() + PROMPT_PROGRAM_MS, deadline);
      // The mark goes on with the C-c, on condition that it is still as judged above: of the
      // calls that judged the pane free at once, one presses C-c and types, the others are
      // refused. It says until when this call waits on the command.
      const claimed = markValue(jobId, Date.now() + Math.max(0, deadline - performance.now()));
      mine = claimed;
      await freshPrompt(ctx, snapshot, pane, now, args.force, drawn(), byInput, {
        set: setMarkCommand(pane.id, claimed),
        claim: {
          format: markFreeFormat(seen),
          refusal: async () => {
            const value = await readMark(ctx, pane.id);
            if (markFree(seen, value)) return null;
            return await markRefusal(ctx, pane.id, serverPid, value, null) ??
              takenRefusal(pane.id, value);
          },
        },
      });
      // The C-c makes the shell draw its prompt again, running the programs that draw it: the
      // typing waits for them, as the C-c did.
      const waited = performance.now();
      const type = () =>
        pasteViaBuffer(ctx, snapshot, pane, typed, {
          enter: true,
          keepNewlines: true,
          force: args.force,
          // Whatever reached the line between the fresh prompt and now (a person's or another
          // client's keys) is emptied by keys the line editor handles in order with the paste:
          // End reaches the end of the line (bound in emacs, vi insert and vi command keymaps;
          // C-e inserts a character in vi insert mode), C-u kills back to the start (in vi
          // command mode the character under the cursor stays), A appends at the end (vi
          // command mode: enters insert mode; anywhere else a letter), C-u kills again. A shell
          // without line editing gets the End sequence as text and its terminal's line-kill
          // (C-u) takes it, and the A, away.
          before: [["send-keys", "-t", pane.id, "End", "C-u", "A", "C-u"]],
          // The shell itself, not a program it started, must be reading the keyboard: a bash
          // script blocked in `read` looks like "bash" too. And it is still the program judged.
          holds: pane.pid,
          command: now.command,
          // And the pane is still this call's: nobody judged its mark stale meanwhile.
          claim: {
            format: markHeldFormat(claimed),
            refusal: async () => {
              const value = await readMark(ctx, pane.id);
              return value === claimed ? null : takenRefusal(pane.id, value);
            },
          },
        });
      const stillDrawing = () =>
        new ToolFailure(
          `Pane ${pane.id}'s shell (pid ${pane.pid}) was given C-c for a fresh prompt, but a ` +
            `program it started still held the terminal ${
              Math.round(performance.now() - waited)
            } ms later: a prompt command may still be running (PROMPT_COMMAND, a $(...) in ` +
            "PS1, zsh's precmd), or one it started since. Nothing was typed.",
          "Wait for the prompt (wait_for_idle with atPrompt) and try again, or make the " +
            "prompt's commands quicker.",
        );
      typing = true;
      await whileShellAway(
        ctx,
        drawn(),
        type,
        (away, last) => Promise.resolve(last ? stillDrawing() : away),
      );
      sent = true;
      const endToken = endMarker(nonce);
      let result: MarkedRead | null = null;
      let died: PaneProbe | null = null;
      /** Over without its end marker, by the job reader and the line editor (see below). */
      let interrupted: JobView | null = null;
      /** When an end marker that does not count yet was first read (see recheckBy). */
      let heldSince: number | null = null;
      const ended = async () => {
        const c = await readMarked(ctx, ref);
        if (c.marked.held) heldSince ??= performance.now();
        return c.marked.status !== null ? c : null;
      };
      if (!args.background) {
        await ctx.progress(0, effective, `Running in ${pane.id}`);
        loop: while (true) {
          const by = recheckBy(heldSince, deadline);
          const event = await watch.next(by);
          switch (event.kind) {
            case "lines":
              if (by < deadline || event.lines.some((l) => l.includes(endToken))) {
                result = await ended();
                if (result) break loop;
              }
              break;
            case "tick": {
              const ran = Math.round(performance.now() - began);
              await ctx.progress(
                ran,
                effective,
                `Running in ${pane.id}: ${Math.round(ran / 1000)} s`,
              );
              // Quiet for a while: a person's C-c (or an `exec` in the command) may have put
              // the shell back at its prompt without the end marker.
              interrupted = await overWithoutEnd(ctx, ref);
              if (interrupted) break loop;
              break;
            }
            case "died":
              died = event.probe;
              break loop;
            case "timeout":
              // Only the end marker's moment to read again is up.
              if (by < deadline && performance.now() < deadline) {
                result = await ended();
                if (result) break loop;
                break;
              }
              break loop;
            case "cancelled":
              // The command keeps running in the pane: the pane stays busy until it ends.
              state.attached = false;
              throw new TmuxError(
                "cancelled",
                `The call was cancelled; the command keeps running (job ${jobId}).`,
              );
          }
        }
      }
      watch.close();
      result ??= await readMarked(ctx, ref);
      let { marked } = result;
      // No end marker and the pane alive: a program the shell started holds the terminal (it
      // runs), or the shell waits at a prompt, quiet, without it (the line was dropped, or
      // the shell holds it as unfinished): the job reader's verdict, which waits a moment.
      let lost: string | null = null;
      if (
        died === null && marked.status === null && !args.background &&
        !paneEnded(watch.start, result.probe)
      ) {
        // Read in the wait already when it ended there (its reader waits a moment to judge).
        const fromWait = interrupted;
        const view = fromWait ?? await readJob(ctx, ref);
        interrupted = null;
        if (view.state === "exited") {
          marked = {
            begun: view.complete,
            status: view.exitStatus,
            endedMs: null,
            output: view.output,
            ...(view.startNote ? { startNote: view.startNote } : {}),
            ...(view.cutBytes ? { cutBytes: view.cutBytes } : {}),
          };
        } else if (view.state === "lost" && !marked.begun) {
          lost = "it never started: the shell waits at a prompt, quiet, and printed none of its " +
            "markers (the line was dropped, or the shell holds it as unfinished: an open " +
            "quote or a trailing backslash typed before, which C-c could not clear)";
        } else if (
          view.state === "lost" &&
          (fromWait !== null || await lineEditorReads(ctx.runner, ctx.address, pane.id, ctx.signal))
        ) {
          // Begun, the shell quiet at a prompt could be the shell itself waiting in a `read` of
          // the command; not while its line editor reads the keys: it is back at its prompt.
          interrupted = view;
          lost = view.lostReason ?? "the shell is back at its prompt without the end marker";
        }
      } else interrupted = null;
      const unfinished = died === null && marked.status === null;
      const timedOut = unfinished && !args.background && interrupted === null;
      const stillRunning = unfinished && lost === null && !paneEnded(watch.start, result.probe);
      if (stillRunning) state.attached = false;
      else table.delete(key);
      // Still running: the mark stays, without a call waiting on it; else it is given back.
      await swapMark(ctx, pane.id, claimed, stillRunning ? jobId : null);
      if (marked.status !== null) {
        endsFor(ctx.runner).set(key, { at: performance.now(), typed: false });
      }
      // Unfinished, and another run_command's line typed and begun after it (by hand, or once
      // this job was judged over): what follows that line is the other command's.
      const cutAtNext = marked.status === null && marked.beforeNext !== undefined;
      const budget = Math.max(1_000, ctx.config.maxResultBytes - 2_048);
      const output = keepTail(cutAtNext ? marked.beforeNext! : marked.output, budget);
      const omittedBytes = output.omittedBytes + (marked.cutBytes ?? 0);
      const exitStatus = marked.status ?? died?.deadStatus ?? null;
      // The pane gone (or respawned) before any marker was read: whatever it printed is gone.
      const unread = !marked.begun && marked.status === null &&
        (!result.probe.exists || result.probe.pid !== ref.panePid);
      // Text below the cursor once the end marker is out: the command moved the cursor up and
      // the marker (and the prompt) went over some of its output.
      const overwritten = marked.status !== null && await textBelowCursor(ctx, pane.id);
      const data = {
        paneId: pane.id,
        exitStatus,
        output: output.text,
        // Neither marker found in a pane still there: nothing printed yet, nothing lost.
        outputComplete: (marked.begun || (marked.status === null && marked.output === "")) &&
          !unread && !overwritten && !cutAtNext && omittedBytes === 0,
        omittedBytes,
        timedOut,
        stillRunning,
        paneDied: died !== null || (unfinished && lost === null && !stillRunning),
        ...(stillRunning || args.background || lost !== null ? { jobId } : {}),
        effectiveTimeoutMs: effective,
        timeoutClamped: clamped,
        durationMs: Math.round(performance.now() - began),
        transport: watch.transport,
      };
      const summary = interrupted !== null && lost !== null
        ? `${pane.id}: over after ${data.durationMs} ms, no exit status: ${lost}. The pane is free.`
        : lost !== null
        ? `${pane.id}: not running after ${effective} ms: ${lost}. The pane is free.`
        : data.paneDied
        ? `${pane.id}: the pane's shell exited while the command ran${
          exitStatus !== null ? ` (status ${exitStatus})` : ""
        }.`
        : args.background && stillRunning
        ? `${pane.id}: started in the background as job ${jobId}; the pane is busy until it ends.`
        : timedOut
        ? `${pane.id}: still running after ${effective} ms as job ${jobId}; the pane is busy until ` +
          `it ends.${result.marked.held ? HELD_NOTE : ""}`
        : `${pane.id}: exited with status ${marked.status}.${
          marked.startNote ? ` ${marked.startNote}` : ""
        }`;
      return { data, summary };
    } catch (error) {
      // Typed, or perhaps (tmux did not confirm the step, or the call was cancelled in it): the
      // pane counts as busy until the command is seen to end. Refused: nothing was typed.
      const maybeTyped = sent ||
        (typing && !(error instanceof ToolFailure && !(error instanceof Unconfirmed)));
      if (maybeTyped) state.attached = false;
      else if (table.get(key) === state) table.delete(key);
      if (mine !== null) {
        await swapMark(ctx, pane.id, mine, maybeTyped && state.ref ? jobIdOf(state.ref) : null);
      }
      throw error;
    } finally {
      watch?.close();
    }
  },
});

/** Registers the input tools. */
export function registerInputTools(registry: ToolRegistry): void {
  registry.add(sendKeys, sendKeysBatch, pasteText, runCommand);
}
