/**
 * A job's markers: the shell words run_command types around a command, which print a begin
 * marker before it and an end marker (exit status, check, time) after it, and finding them, and
 * what the command printed between them, in rows read from its pane. Text only: no tmux call.
 *
 * @module
 */

import { shownStart } from "../tmux/shown_cells.ts";

/** The begin marker's text (a line ends with it). */
export function beginMarker(nonce: string): string {
  return `__tmcp_${nonce}_B`;
}

/** The start of the end marker's text (status, check and time follow). */
export function endMarker(nonce: string): string {
  return `__tmcp_${nonce}_E:`;
}

/**
 * The two numbers the typed line carries for the end marker's check, taken from the nonce
 * (so a later process knows them from the job id): 22 bits each, so that the check stays
 * within the 32-bit arithmetic of the smallest shells (mksh) for any status a shell reports
 * (at most 255; ksh93's 256 + a signal).
 */
function checkTerms(nonce: string): [number, number] {
  const a = parseInt(nonce.slice(0, 6), 16) >>> 2;
  const b = parseInt(nonce.slice(6, 12), 16) >>> 2;
  // Equal terms would make the check 0 whatever the status (one nonce in four million).
  return [a, b === a ? b ^ 1 : b];
}

/**
 * The check the end marker carries with exit status `status`: `(a ^ b) * (status + 1)`, which
 * the shell computes when the command has ended. The typed line shows `a` and `b`, never their
 * product: editing what is on screen (cursor moves, inserting or deleting characters) only
 * rearranges text that is there, so an end marker made that way (e.g. the begin marker's `_B`
 * overwritten with `_E:0`) and a status changed after the end both fail it. A program that
 * reads the screen can compute it: that end is refused while the program holds the terminal
 * (`endThatCounts` in job_state.ts), not by the check.
 */
export function endCheck(nonce: string, status: number): string {
  const [a, b] = checkTerms(nonce);
  return String((a ^ b) * (status + 1));
}

/** ST (`ESC \`) as a printf format writes it: octal, then an escaped backslash. */
const ONE_ST = String.raw`\033\\`;
/**
 * ST twice (see {@link markerWords}): a DCS string whose data ended in a lone ESC takes a
 * single ST's ESC and backslash as data (in tmux, any byte but a backslash after an ESC there
 * goes back into the data); the second ST ends it. Nothing on the ground.
 */
const ST = ONE_ST + ONE_ST;
/** Insert two blank lines at the cursor's row (CSI 2 L), as a printf format writes it. */
const IL = String.raw`\033[2L`;
/**
 * What the end marker's format writes after its ST, before its line feed: the scroll region
 * reset to the whole screen with the cursor kept where it is (`ESC 7`, `ESC [ r`, `ESC 8`; the
 * 7 and 8 are printf arguments, {@link RESET_ARGS}: dash's printf reads `\0337` as one octal
 * number), autowrap on (`ESC [ ? 7 h`), then a carriage return. A command can leave the
 * terminal so that the shell's end marker does not show as printed: a scroll region above the
 * cursor (a line feed there does not move it, so the marker and then the prompt are written on
 * one row), autowrap off (a long marker cut at the right edge), or `stty -onlcr` (the marker
 * would start at the column the output ended at). With a forged end printed before, the
 * forged one was left the only valid end on screen. Then the attributes and the character set
 * as a terminal starts (`ESC [ m`, SI, `ESC ( B`): a command that left text hidden (SGR 8), in
 * its background's colour or in the line-drawing set hid the marker from the person, and from
 * the output stream as a person sees it (terminal_text.ts), where the job's end is heard.
 */
const RESET = String.raw`\033%s\033[r\033%s\033[?7h\033[m\017\033(B\r`;
/** {@link RESET} as typed before it reset the attributes (a line typed then still reads). */
const RESET_BEFORE = String.raw`\033%s\033[r\033%s\033[?7h\r`;
/** The printf arguments {@link RESET} takes. */
const RESET_ARGS = "7 8";

/**
 * The shell words that print the markers (see `typedCommand` in typed.ts), with `printf` the
 * word that runs the shell's printf (`\builtin printf` where there is one). The end marker
 * carries `$?` (expanded first, so it is the command's status; expanding words does not change
 * it), its check ({@link endCheck}) and the time, so a later process can tell how long the
 * command ran: bash 5 and zsh with zsh/datetime keep it in `EPOCHREALTIME` (to the
 * microsecond or finer, after the locale's decimal point) and `EPOCHSECONDS`, which saves
 * starting `date` (a fork and an exec, over 1 ms, in every command); `date +%s` elsewhere
 * (whole seconds: `%N` is GNU's alone). In whole seconds a job of 400 ms read back said it took
 * none. A value that is not a time (someone's own variable of that name) only loses the end
 * time. The numbers are written without leading zeros (an octal number in some shells). The
 * words run with stderr going to /dev/null (typed.ts), `date`'s with them.
 *
 * Each marker starts with ST (`ESC \`, which the terminal takes and never shows): output that
 * stopped inside an escape sequence (`head -c` through a coloured log, `cat` of a binary file,
 * a program killed in the middle of a colour code) leaves the terminal inside it, and without
 * the ST the marker's `_` would end a cut `ESC [ 3`, or start an APC string after a lone ESC
 * that swallows the marker and the prompt, or the marker would go into an unfinished OSC, DCS
 * or APC string. ST ends every one of them (CAN would not end a DCS string in tmux), sent twice
 * for a DCS string left after a lone ESC (which takes the first as data: without the second, a
 * command ending so hid the shell's end marker, and an end it printed before was read). The begin
 * marker's is for a command typed by hand before (send_keys): what it left unfinished takes
 * the prompt and the echo of the typed line, would take the begin marker too, and the job's
 * output would then start at rows above its own.
 *
 * The end marker goes on a row of its own, below the cursor: output whose last line ends in
 * `\r` (a progress bar) leaves the cursor at the start of that line, and the marker written
 * there took its place. The blank line this adds after output that ended with a newline is no
 * output ({@link findMarkers} drops trailing blank lines, as it always has), and output without
 * a final newline comes back the same (its last line is its own row now, not the start of the
 * marker's). Two blank lines are inserted there first (IL): when the command left the cursor
 * above some of its output, the rows below move down past the marker and the next prompt
 * instead of being written over by them, and, where the screen has room for them, what is
 * below the cursor tells that the output is not whole (`textBelowCursor` in run_command.ts);
 * at the screen's bottom the last two go off it, as two rows were written over before. Where
 * nothing is below, they change nothing. Before its line feed the end marker undoes what the
 * command may have left set that would hide it ({@link RESET}), and starts its row with a
 * carriage return.
 */
export function markerWords(
  nonce: string,
  printf = "\\printf",
): { begin: string; end: string } {
  const [a, b] = checkTerms(nonce);
  return {
    begin: `${printf} '${ST}%s_%s_B\\n' __tmcp ${nonce}`,
    end: `${printf} '${ST}${RESET}\\n${IL}%s_%s_E:%s:%s:%s\\n' ${RESET_ARGS} __tmcp ${nonce} ` +
      `"$?" ` +
      `"$(( (${a} ^ ${b}) * ($? + 1) ))" "\${EPOCHREALTIME:-\${EPOCHSECONDS:-$(date +%s)}}"`,
  };
}

/** What the markers in a stretch of the pane tell. */
export interface Marked {
  /** Whether the begin marker is there (the command started, and its output is all here). */
  readonly begun: boolean;
  /** The exit status from the end marker, else null. */
  readonly status: number | null;
  /** When the command ended (ms since the epoch, the pane's clock), when it said so. */
  readonly endedMs: number | null;
  /** What it printed between the markers (all of it after the begin marker, if no end). */
  readonly output: string;
  /**
   * Without an end marker: the output up to the line of a later run_command, when the pane
   * shows one (see {@link typedLineAt}); a job that is over ended before it.
   */
  readonly beforeNext?: string;
  /**
   * Ended, with neither its begin marker nor the echo of its line above the end: its start
   * left the pane (cleared with the history, or pushed out by the history limit).
   */
  readonly startGone?: boolean;
  /** No end marker, but a row shaped like it that fails its check (made or changed on screen). */
  readonly falseEnd?: boolean;
  /**
   * More than one row carries a valid end marker: a program the command ran printed one (it can
   * read its screen, so it knows the check), above the shell's own or, by moving the cursor,
   * below it. Which one the shell printed cannot be told: `status` and `endedMs` are null, and
   * the output runs to the lowest.
   */
  readonly twoEnds?: boolean;
  /**
   * With {@link twoEnds}: the output stream told it, not the rows. It carried a valid end marker
   * of another status than the one the pane shows, or of two statuses: a program wrote one, and
   * may have written it over the shell's (see `noteStreamed` in job_state.ts).
   */
  readonly streamedEnds?: boolean;
  /**
   * With {@link streamedEnds}: the stream, heard without a gap since before the line was typed,
   * carried no valid end at all, though the pane shows one: a program wrote it there while it
   * kept its output from this process (`refresh-client -A PANE:off` on its client).
   */
  readonly unheardEnd?: boolean;
  /**
   * With {@link unheardEnd}: the stream was heard from before the line was typed until this
   * server's feed of it was cut (its tmux client detached or lost), and the end came unheard.
   */
  readonly streamCut?: boolean;
  /**
   * More than one row carries the begin marker: a program the command ran printed one. The
   * output starts at the shell's (see {@link findMarkers}), and may hold what the program drew.
   */
  readonly twoBegins?: boolean;
  /**
   * An end marker with its check is there, but it does not count yet: the pane's shell does
   * not hold its terminal (see `readMarked` in job_state.ts). `status` stays null meanwhile.
   */
  readonly held?: boolean;
  /**
   * UTF-8 bytes cut from the start of `output`: when it was kept (`keepFinished`, job_state.ts),
   * or read as rows streamed by (job_scan.ts).
   */
  readonly cutBytes?: number;
  /** The same for {@link beforeNext}. */
  readonly beforeNextCutBytes?: number;
  /**
   * Once ended, with `startGone`: why, and how to keep a long output whole (one sentence); with
   * `twoBegins`, why the output is not known to be whole (job_state.ts). Both: one after the other.
   */
  readonly startNote?: string;
}

/**
 * The shape of the line tmux draws on a dead pane's bottom row by default (remain-on-exit:
 * fixed text before tmux 3.3, the default of `remain-on-exit-format` since), trailing spaces
 * trimmed. Only a fallback, for when the row tmux drew could not be read
 * ({@link deadRowRest}): the format may be set to anything, or to nothing.
 */
export const DEAD_LINE = /^Pane is dead \((?:status|signal) [^,]*, .*\)$/;

/**
 * What is output of a dead pane's last written row, `row`: the row without the line tmux drew
 * when the pane's process exited (remain-on-exit), or null when the row is not tmux's.
 * `drawn`: the text tmux drew there, as read from the pane's bottom row (`deadDrawn` in
 * job_state.ts), else null.
 *
 * tmux draws its line by moving to the bottom row and starting a new line there, and it marks
 * the row it left as wrapped: `capture-pane -J` joins that row to the line. So the row is
 * output followed by what tmux drew, and only that end of it goes. The rest is output (the
 * command printed it without a final newline on the bottom row), with the spaces the join kept
 * at its end trimmed, as a row of its own is read. Text equal to tmux's line further up, or at
 * the start of the row, is output: the format may show what the pane chose (`#{pane_title}`).
 *
 * Not known what was drawn (a tmux that cannot tell, a format whose line is not its text),
 * a row of the default's shape ({@link DEAD_LINE}), alone on its row, is taken as tmux's.
 */
export function deadRowRest(row: string, drawn: string | null): string | null {
  const text = row.trimEnd();
  if (drawn !== null && drawn !== "" && text.endsWith(drawn)) {
    return text.slice(0, text.length - drawn.length).trimEnd();
  }
  return DEAD_LINE.test(text) ? "" : null;
}

/** Units of a typed command for `printf %b` (`escapedUnits` in typed.ts): bytes or `\0ooo`. */
const UNITS = String.raw`(?:[A-Za-z0-9 ,._+:@%/=-]|\\0[0-7]{3})*`;
/** The same in a `$'...'` word (zsh): bytes or `\ooo`. */
const ANSI_UNITS = String.raw`(?:[A-Za-z0-9 ,._+:@%/=-]|\\[0-7]{3})*`;
/** A typed command's units as one quoted word. */
const QUOTED_UNITS = `(?:'${UNITS}'|\\$'${ANSI_UNITS}')`;
/** The shell variable a long or decoded command is held in (`VARIABLE` in typed.ts). */
const HELD = "__tmux_mcp_cmd";

/**
 * What a shell may show after the typed line on its row: zsh keeps the right prompt (RPROMPT)
 * there when the line fits beside it. Always after a space.
 */
const BESIDE = "(?: .*)?";

/**
 * The line run_command types (`typedCommand` in typed.ts), whole, as the shell echoes it after
 * its prompt (and before a right prompt), in each shape it has had: the nonce in group 1. Only
 * these exact shapes count, not any line holding the marker words (a job's own output may show
 * them: `history`, a history file, a capture).
 */
const TYPED_LINES = (() => {
  const word = `(?:${QUOTED_UNITS}|"\\$${HELD}")`;
  // Each word a shell could take for an alias is typed quoted (`\printf`): older lines were not;
  // bash and zsh now run them with `\builtin`, past any function of the same name.
  const q = String.raw`(?:\\builtin |\\?)`;
  const evaluate = `(?:${q}command eval|${q}eval)`;
  // Lines typed before the markers started with ST (and the end marker with a new line), then
  // with it twice.
  const st = String.raw`(?:\\033\\\\){1,2}`;
  // And since its ST, the end marker's format resets what could hide it (RESET).
  const reset = [RESET, RESET_BEFORE].map((r) => r.replace(/[\\[\]?()]/g, "\\$&")).join("|");
  const begin = String.raw`${q}printf '(?:${st})?%s_%s_B\\n' __tmcp ([0-9a-f]{20})`;
  // The time: in seconds before `EPOCHREALTIME` came first.
  const seconds = (date: string) => String.raw`EPOCHSECONDS:-\$\(date \+%s${date}\)`;
  const end = (date: string) =>
    String.raw`${q}printf '(?:(?:${st})?(?:${reset})?\\n\\033\[2L)?%s_%s_E:%s:%s:%s\\n' ` +
    String.raw`(?:${RESET_ARGS} )?__tmcp \1 "\$\?" ` +
    String.raw`"\$\(\( \(\d{1,7} \^ \d{1,7}\) \* \(\$\? \+ 1\) \)\)" ` +
    String.raw`"\$\{(?:EPOCHREALTIME:-\$\{${seconds(date)}\}|${seconds(date)})\}"`;
  const unset = `(?:; unset ${HELD})?`;
  const line = (shape: string) => new RegExp(`^.* ${shape}${BESIDE}$`);
  // The words in groups whose stderr is /dev/null (xtrace): `date`'s errors go there with them.
  const quiet = (words: string) => String.raw`\{ ${words}; \} 2>/dev/null`;
  const decoded = `${q}printf -v ${HELD} %b ${word}`;
  const grouped = line(
    `${quiet(`${begin}(?:; ${decoded})?`)}; ${evaluate} ` +
      `(?:${word}|"\\$\\(${quiet(`${q}printf %b ${word}`)}\\)"); ${quiet(end("") + unset)}`,
  );
  const bare = line(
    `${begin}; (?:${evaluate} ${word}|${decoded}; ${evaluate} "\\$${HELD}"|` +
      `${evaluate} "\\$\\(${q}printf %b ${word}\\)"); ${end(" 2>/dev/null")}${unset}`,
  );
  return [grouped, bare];
})();
/**
 * The lines that build a long command up before its typed line (`typedCommand`), in a group
 * whose stderr is /dev/null (xtrace) or, as typed before, bare.
 */
const HELD_LINE = (() => {
  const assign = `${HELD}=(?:''|"\\$${HELD}"${QUOTED_UNITS})`;
  return new RegExp(`^.* (?:${assign}|\\{ ${assign}; \\} 2>/dev/null)${BESIDE}$`);
})();

/**
 * Rows between a typed line and its begin marker: what the shell prints once the line is read
 * and before it runs it (bash's PS0, zsh's preexec, a DEBUG trap that prints).
 */
export const BEFORE_BEGIN_ROWS = 8;

/**
 * Whether row `i` is the line of another run_command (not `nonce`'s), typed and run: its exact
 * typed line, and its begin marker below it, with at most {@link BEFORE_BEGIN_ROWS} rows
 * between (a shell without line editing may have put its prompts before it on its row).
 * Returns the row its typed lines start at (a long command's first line), else -1.
 *
 * A job's own output can show such a line and marker (it can read its own screen), and then
 * its output is taken as ending there: cut short, and said to be (never longer, never whole).
 */
function typedLineAt(lines: readonly string[], i: number, nonce: string): number {
  const typed = typedNonce(lines[i]);
  if (typed === null || typed === nonce) return -1;
  const begin = beginMarker(typed);
  const below = lines.slice(i + 1, i + 2 + BEFORE_BEGIN_ROWS);
  if (!below.some((next) => next.trimEnd().endsWith(begin))) return -1;
  let first = i;
  while (first > 0 && isHeldLine(lines[first - 1])) first--;
  return first;
}

/** The nonce of the run_command whose typed line row `row` is (see {@link TYPED_LINES}), else null. */
export function typedNonce(row: string): string | null {
  if (!row.includes("__tmcp ")) return null;
  const trimmed = row.trimEnd();
  for (const shape of TYPED_LINES) {
    const m = shape.exec(trimmed);
    if (m) return m[1];
  }
  return null;
}

/** Whether row `row` is one of the lines that build a long command up ({@link HELD_LINE}). */
export function isHeldLine(row: string): boolean {
  return row.includes(HELD) && HELD_LINE.test(row.trimEnd());
}

/** An end marker of a job's read off a row (see {@link endRow}). */
export interface EndRow {
  readonly status: number;
  readonly endedMs: number | null;
  /** What the row holds before the marker (output without a final newline, as typed before). */
  readonly prefix: string;
}

/**
 * The pattern of job `nonce`'s end marker on a row (trailing spaces trimmed), in either case: a
 * terminal set to upper-case its output (`stty olcuc`, left by the command) shows the shell's
 * marker as `__TMCP_<HEX>_E:`, and a read that missed it would leave a forged one the only end.
 * The nonce's letters then match in either case, and the numbers as they are.
 */
export function endPattern(nonce: string): RegExp {
  // zsh with `setopt force_float` prints arithmetic as a float: the check as "2134552.".
  return new RegExp(`^(.*)${endMarker(nonce)}(\\d{1,5}):(\\d{1,12})(?:\\.0*)?(?::(.*))?$`, "i");
}

/**
 * Whether `line` holds the text of job `nonce`'s end marker, in either case (see endPattern).
 * Its `_E:` is upper case either way: only a row holding that is lowered to compare.
 */
export function holdsEnd(line: string, nonce: string): boolean {
  return line.includes("_E:") && line.toLowerCase().includes(endMarker(nonce).toLowerCase());
}

/**
 * Job `nonce`'s end marker on row `row` (`pattern`: {@link endPattern}): null when the row does
 * not hold its text, false when it holds a row shaped like it that fails its check.
 */
export function endRow(row: string, nonce: string, pattern: RegExp): EndRow | false | null {
  if (!holdsEnd(row, nonce)) return null;
  const m = pattern.exec(row.trimEnd());
  // Only the shell prints the check: a row that has the end marker's shape without it was
  // made on screen (by a program's cursor moves over the begin marker), or changed since.
  if (!m || m[3] !== endCheck(nonce, Number(m[2]))) return false;
  return { status: Number(m[2]), endedMs: m[4] ? epochMs(m[4]) : null, prefix: m[1] };
}

/**
 * The end marker's time in ms: whole seconds (`EPOCHSECONDS`, `date +%s`, and every marker
 * before `EPOCHREALTIME`) or seconds and their fraction, after the locale's decimal point (a
 * dot or a comma; bash writes six digits, zsh ten). Anything else (someone's own variable of
 * that name) is no time: null.
 */
export function epochMs(word: string): number | null {
  const m = /^(\d{1,15})(?:[.,](\d{1,20}))?$/.exec(word);
  if (!m) return null;
  return Number(m[1]) * 1000 + Number((m[2] ?? "").padEnd(3, "0").slice(0, 3));
}

/**
 * Finds a command's markers in `lines` and cuts out what lies between them. `start`: the index
 * of the row the job started at, where its output is taken from when no marker or echo of its
 * line says where it begins.
 *
 * Every marker may have been printed by a program the command ran: it can read its own screen
 * (`tmux capture-pane`; every pane has TMUX set), so it knows the nonce and the end marker's
 * check, and it can move the cursor anywhere on the screen. Only the rows the history holds are
 * beyond its reach. So two valid end markers leave no exit status ({@link Marked.twoEnds}):
 * the shell's may be the lower (one printed in the output) or the upper (one written below the
 * cursor). Of several begin markers the shell's is the first printed after the echo of the
 * typed line ({@link BeginRows}): every one the command printed comes after it.
 *
 * `shown`: the same rows as a person sees them (ShownCells.views): the markers are looked for
 * as printed (a command that left its terminal hiding text hides them from the person, not
 * from this), the output is taken as shown.
 */
export function findMarkers(
  lines: readonly string[],
  nonce: string,
  start = 0,
  shown: readonly string[] = lines,
): Marked {
  const begin = beginMarker(nonce);
  const echo = echoWords(nonce);
  const endRe = endPattern(nonce);
  let endAt = -1;
  let ends = 0;
  let status: number | null = null;
  let endedMs: number | null = null;
  let prefix = "";
  let falseEnd = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    const end = endRow(lines[i], nonce, endRe);
    if (end === null) continue;
    if (end === false) {
      falseEnd = true;
      continue;
    }
    ends++;
    if (endAt !== -1) continue;
    endAt = i;
    ({ status, endedMs, prefix } = end);
  }
  const twoEnds = ends > 1;
  const until = endAt === -1 ? lines.length : endAt;
  // A shell without line editing may have printed prompts for the lines before it on the same
  // row ("# # __tmcp_..._B"): the marker ends the line.
  const begins = new BeginRows(start);
  for (let i = 0; i < until; i++) {
    begins.row(i, lines[i].trimEnd().endsWith(begin), lines[i].includes(echo));
  }
  const beginAt = begins.chosen() ?? -1;
  // No begin marker (the command's output moved the cursor over it, or cleared the screen):
  // what it printed starts after the echo of the typed line (the begin marker's words, with a
  // space and the `;` after them: `__tmcp NONCE;`, which only the echo holds; with xtrace on,
  // the trace of the end marker's words shows `__tmcp NONCE` after the output), never at
  // earlier output; without that either, at `from`, the row the job started at.
  let from = beginAt;
  let startGone = false;
  if (beginAt === -1) {
    from = Math.min(until, Math.max(0, start)) - 1;
    let echoAt = -1;
    for (let i = until - 1; i >= 0 && echoAt === -1; i--) {
      if (lines[i].includes(echo)) echoAt = i;
    }
    if (echoAt !== -1) from = echoAt;
    else if (endAt !== -1) {
      // Ended, and nothing of its start above the end. Its start below the end: the cursor
      // went up over it, and what is above is earlier output. Nowhere: the start left the
      // pane (the command cleared the screen and the history, as `clear` does, or its output
      // pushed the start out of the history). Then an end above the row the job started at
      // says the rows moved up: cleared, and what is above the end is what it printed since.
      const below = lines.slice(endAt + 1).some((l) =>
        l.includes(echo) || l.trimEnd().endsWith(begin)
      );
      if (!below) {
        startGone = true;
        if (endAt < start) from = -1;
      }
    }
  }
  // No end marker: a job that is over (lost) ended before the next run_command's line, when
  // the pane shows one; the output up to it is kept aside for the reader that knows it is over
  // (a job that runs holds the pane: no run_command is typed into it meanwhile). Looked for
  // below the first begin marker: one the command printed further down (a copy of its pane,
  // say) does not move the search past a line typed after it.
  let next = -1;
  if (endAt === -1 && beginAt !== -1) {
    for (let i = begins.first + 1; i < until && next === -1; i++) {
      next = typedLineAt(lines, i, nonce);
    }
  }
  const body = shown.slice(from + 1, until);
  if (prefix !== "") body.push(shownStart(shown[endAt], prefix));
  return {
    begun: beginAt !== -1,
    status: twoEnds ? null : status,
    endedMs: twoEnds ? null : endedMs,
    output: beginAt === -1 && endAt === -1 ? "" : trimTrailingBlank(body).join("\n"),
    ...(startGone ? { startGone } : {}),
    ...(endAt === -1 && falseEnd ? { falseEnd } : {}),
    ...(twoEnds ? { twoEnds } : {}),
    ...(begins.count > 1 ? { twoBegins: true } : {}),
    ...(next === -1 ? {} : {
      beforeNext: trimTrailingBlank(shown.slice(from + 1, Math.max(from + 1, next))).join("\n"),
    }),
  };
}

/** What only the echo of job `nonce`'s typed line holds (see {@link findMarkers}). */
export function echoWords(nonce: string): string {
  return `__tmcp ${nonce};`;
}

/**
 * The begin markers among rows read in order, and the one that is the shell's: the only one;
 * of several, the first below the first echo of the typed line (a program the command ran
 * prints its own after the shell's, or over earlier rows on screen, above the typed line: those
 * would pull in output of earlier commands); without an echo above any, the first at or after
 * the row the job started at; without one there either, the first. Held as rows stream by
 * (job_scan.ts), with what each choice needs: `T` is what a row's place is given as.
 */
export class BeginRows<T = number> {
  readonly #start: number;
  #echoSeen = false;
  #count = 0;
  #first: T | null = null;
  #firstIndex = -1;
  #fromStart: T | null = null;
  #belowEcho: T | null = null;

  /** `start`: the index of the row the job started at. */
  constructor(start: number) {
    this.#start = Math.max(0, start);
  }

  /** Row `index` (`at`: its place), whether it ends with the begin marker and holds the echo. */
  row(index: number, isBegin: boolean, isEcho: boolean, at?: T): void {
    if (isBegin) {
      const place = at ?? index as T;
      this.#count++;
      if (this.#first === null) {
        this.#first = place;
        this.#firstIndex = index;
      }
      if (this.#fromStart === null && index >= this.#start) this.#fromStart = place;
      if (this.#belowEcho === null && this.#echoSeen) this.#belowEcho = place;
    }
    if (isEcho) this.#echoSeen = true;
  }

  /** Begin markers read so far. */
  get count(): number {
    return this.#count;
  }

  /** The index of the first begin marker (-1: none). */
  get first(): number {
    return this.#firstIndex;
  }

  /** The place of the shell's begin marker, as far as the rows read tell; null: none. */
  chosen(): T | null {
    if (this.#count < 2) return this.#first;
    return this.#belowEcho ?? this.#fromStart ?? this.#first;
  }
}

/** `lines` without the blank ones at their end. */
export function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}
