/**
 * The fuzz's second judge (`deno task fuzz --hook-guard`): the server runs with
 * `--allow-attended-input`, so that nothing of its own stands between a call and the person's
 * view, and before each call `tmux-mcp hook guard` is asked about it, exactly as Claude Code
 * would ask it (the same hook input, environment and server flags). Every call is then made,
 * asked about or not, so that the world goes on changing; a call the guard let pass is held to
 * what the guard promises (src/hooks/main.ts, `guard`):
 *
 * - no pane a person watches, nor the agent's own, is typed into, pasted into, run in,
 *   respawned, killed, cleared, piped, or put in or taken out of copy mode: each is there after,
 *   with the same process, the same text (history included, wrapped rows joined: a resize
 *   changes none of it), no new pipe and the same mode;
 * - the person's keys go to the pane they went to (their client's session, window and pane);
 * - a window the person sees zoomed stays zoomed;
 * - what the person is shown is set as it was: the options of their session, of the window they
 *   see, of its panes, the global and server ones, the status line entries of their session's
 *   other windows (synchronize-panes among them), user options and the server options that
 *   reach nobody left out, as the guard leaves them (src/tmux/option_reach.ts).
 *
 * What a hook set earlier may do, and what a program does when typed to (a hidden pane of the
 * person's zoomed window ending unzooms it), is the fuzz's usual note, not a break.
 *
 * @module
 */

import type { FuzzCall } from "./fuzz_args.ts";
import { captureText, type FuzzWorld, paneText, personSettings } from "./fuzz_world.ts";
import type { PreToolUseDecision } from "../../src/hooks/guard.ts";
import { runHook } from "../../src/hooks/main.ts";

/** What the guard answered: a decision, no opinion, or a failure (its exit code and words). */
export type GuardAnswer =
  | { readonly kind: "asked"; readonly reason: string }
  | { readonly kind: "passed" }
  | { readonly kind: "failed"; readonly code: number; readonly stderr: string };

/** The environment the agent gives both the MCP server and its hooks in `w`. */
export function agentEnvOf(w: FuzzWorld): Record<string, string> {
  return { TMUX: `${w.socketPath},${w.pid},${w.agentSession.slice(1)}`, TMUX_PANE: w.agentPane };
}

/** Asks `tmux-mcp hook guard --socket <the world's>` about `call`, as Claude Code would. */
export async function askGuard(w: FuzzWorld, call: FuzzCall): Promise<GuardAnswer> {
  const input = new TextEncoder().encode(JSON.stringify({
    session_id: "fuzz",
    transcript_path: "/nonexistent/fuzz.jsonl",
    cwd: "/",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: `mcp__tmux__${call.tool}`,
    tool_input: call.arguments,
    tool_use_id: "toolu_fuzz",
  }));
  const env = agentEnvOf(w);
  let stdout = "";
  const stderr: string[] = [];
  const code = await runHook(["guard", "--socket", w.t.socket], {
    readStdin: (limit) => Promise.resolve(input.subarray(0, limit + 1)),
    env: (name) => env[name],
    writeStdout: (text) => {
      stdout += text;
      return Promise.resolve();
    },
    writeStderr: (line) => {
      stderr.push(line);
    },
  });
  if (code !== 0) return { kind: "failed", code, stderr: stderr.join("\n") };
  if (stdout === "") return { kind: "passed" };
  const decision = JSON.parse(stdout) as PreToolUseDecision;
  return { kind: "asked", reason: decision.hookSpecificOutput.permissionDecisionReason };
}

/** One pane the guard keeps from a call: its process, whether piped, and its whole text. */
interface KeptPane {
  readonly pid: string;
  readonly piped: boolean;
  readonly dead: boolean;
  /**
   * Whether its program never ends, nor prints, of its own accord: `cat` (the person's), a
   * shell at its prompt, a dead pane. Others (a pane a call started with `echo hi`, `seq`)
   * may end or print while a later call runs: only their process and pipe are held.
   */
  readonly steady: boolean;
  readonly text: string;
  /** The mode it shows (`copy-mode`, `view-mode`), or "": in one, the person's keys go to it. */
  readonly mode: string;
  /** Its width: at one column tmux cannot hold a wide character, and wraps it anew. */
  readonly width: number;
  /** Its height (said with a change of its text: a reshape may be what changed it). */
  readonly height: number;
}

/**
 * Whether `line` is what tmux writes into a pane whose program ended, `Pane is dead (status 3,
 * <date>)`, or that note cut short at any width.
 */
export function deadNote(line: string): boolean {
  const note = "Pane is dead (";
  return line !== "" && (note.startsWith(line) || line.startsWith(note));
}

/** What the guard promises to keep, read before a call. */
export interface KeptView {
  /** The person's client: session, window and pane their keys go to; null when gone. */
  readonly keys: string | null;
  /** The window they see, and whether it is zoomed. */
  readonly window: string;
  readonly zoomed: boolean;
  /** The panes they see (the zoomed one alone), and the agent's own. */
  readonly panes: ReadonlyMap<string, KeptPane | null>;
  /** What they are shown is set to, as personSettings (fuzz_world.ts) reads it; "" when gone. */
  readonly settings: string;
  /** The panes of their window those settings were read for (the zoomed one alone). */
  readonly shown: readonly string[];
}

/** What {@link keptPane} reads of a pane besides its text. */
const PANE_FACTS = "#{pane_id}\t#{pane_pid}\t#{pane_pipe}\t#{pane_dead}\t#{pane_width}\t" +
  "#{pane_mode}\t#{pane_height}\t#{pane_start_command}";

async function keptPane(w: FuzzWorld, pane: string): Promise<KeptPane | null> {
  const facts = await w.t.tmuxRaw("display-message", "-p", "-t", pane, PANE_FACTS);
  if (facts.code !== 0) return null;
  return await keptFrom(pane, facts.stdout.trim(), async (dead) => await paneText(w.t, pane, dead));
}

/**
 * A {@link KeptPane} from its facts as {@link PANE_FACTS} prints them and its text, which
 * `text` reads (or null) leaving out the lines it is given to drop.
 */
async function keptFrom(
  pane: string,
  facts: string,
  text: (drop: (line: string) => boolean) => Promise<string | null>,
): Promise<KeptPane | null> {
  const [id, pid, piped, dead, width, mode, height, start] = facts.split("\t");
  // display-message -t names a missing pane with empty values, and exits 0 (TMUX-NOTES).
  if (id !== pane) return null;
  // A dead pane's note is cut anew at each width (tmux wraps none of it): it is left out.
  const read = await text((l) => dead === "1" && deadNote(l));
  if (read === null) return null;
  // tmux quotes a start command only when it holds more than one word.
  const steady = dead === "1" || ["", "cat", "sh"].includes(start);
  return {
    pid,
    piped: piped === "1",
    dead: dead === "1",
    steady,
    text: read,
    mode,
    width: Number(width),
    height: Number(height),
  };
}

/**
 * {@link keptPane} of each of `panes`, read by one tmux process (two for each pane cost most of
 * a fuzzed call's time where starting a process is slow). Each pane's facts come after a line
 * of a mark no pane can print (a new one for every read), its text after another; a pane gone
 * meanwhile fails the whole chain: then one by one.
 */
async function keptPanes(
  w: FuzzWorld,
  panes: readonly string[],
): Promise<Map<string, KeptPane | null>> {
  const kept = new Map<string, KeptPane | null>();
  const mark = `=${crypto.randomUUID()}=`;
  const chain = panes.length === 0 ? null : await w.t.tmuxRaw(
    ...panes.flatMap((p, i) => [
      ...i > 0 ? [";"] : [],
      ...["display-message", "-p", "-t", p, `${mark}f${i}\t${PANE_FACTS}`, ";"],
      ...["display-message", "-p", `${mark}t${i}`, ";"],
      ...["capture-pane", "-p", "-J", "-S", "-", "-t", p],
    ]),
  );
  if (chain?.code !== 0) {
    for (const p of panes) kept.set(p, await keptPane(w, p));
    return kept;
  }
  // Each pane's facts (a start command may hold a line feed) and text, by the marks.
  const facts = panes.map(() => [] as string[]);
  const texts = panes.map(() => [] as string[]);
  let into: string[] | null = null;
  const marked = new RegExp(`^${mark}([ft])(\\d+)(?:\t|$)`);
  for (const line of chain.stdout.split("\n")) {
    const at = marked.exec(line);
    if (at) {
      const i = Number(at[2]);
      into = at[1] === "f" ? facts[i] : texts[i];
      if (at[1] === "f") into.push(line.slice(at[0].length));
    } else into?.push(line);
  }
  for (const [i, p] of panes.entries()) {
    kept.set(
      p,
      await keptFrom(
        p,
        facts[i].join("\n").trim(),
        (drop) => Promise.resolve(captureText(texts[i].join("\n"), drop)),
      ),
    );
  }
  return kept;
}

/**
 * Reads {@link KeptView}; the panes read are those watched now and the agent's, or `panes` when
 * given. `settings`: read what the person is shown is set to (the fence's judge has no use for
 * it).
 */
export async function keptView(
  w: FuzzWorld,
  panes?: readonly string[],
  settings = true,
): Promise<KeptView> {
  const clients = await w.t.tmuxRaw(
    "list-clients",
    "-F",
    "#{client_tty}\t#{session_id}\t#{window_id}\t#{pane_id}\t#{window_zoomed_flag}",
  );
  const line = clients.code === 0
    ? clients.stdout.split("\n").find((l) => l.startsWith(`${w.personTty}\t`))
    : undefined;
  const [, session, window, pane, zoomed] = line?.split("\t") ?? [];
  const shown = !line || (panes && !settings)
    ? []
    : zoomed === "1"
    ? [pane]
    : (await w.t.tmuxRaw("list-panes", "-t", window, "-F", "#{pane_id}")).stdout
      .split("\n").filter((l) => l);
  const kept = await keptPanes(w, panes ?? [...shown, w.agentPane]);
  return {
    keys: line ? `${session} ${window} ${pane}` : null,
    window: window ?? "",
    zoomed: zoomed === "1",
    panes: kept,
    settings: line && settings ? await personSettings(w, session, window, shown) : "",
    shown,
  };
}

/** What a call the guard passed broke of `before` (read again as `after`), or null. */
export function keptBroken(before: KeptView, after: KeptView, agentPane: string): string | null {
  return keptPanesBroken(before, after, agentPane) ?? focusBroken(before, after) ??
    settingsBroken(before, after);
}

/**
 * Which option of what the person is shown a call changed, or null; none while they are gone,
 * or shown another session or window (focusBroken says so first). A pane's own options count
 * only for a pane shown both before and after: a pane moved into or out of their window (a
 * reshape, which the guard leaves by design) brings or takes its own.
 */
export function settingsBroken(before: KeptView, after: KeptView): string | null {
  if (before.keys === null || after.keys !== before.keys || after.settings === before.settings) {
    return null;
  }
  const both = (l: string) => {
    const pane = /^pane (%\d+): /.exec(l)?.[1];
    return pane === undefined || (before.shown.includes(pane) && after.shown.includes(pane));
  };
  const was = new Set(before.settings.split("\n").filter(both));
  const now = new Set(after.settings.split("\n").filter(both));
  if ([...was].every((l) => now.has(l)) && [...now].every((l) => was.has(l))) return null;
  const changed = [
    ...[...was].filter((l) => !now.has(l)).map((l) => `was ${l}`),
    ...[...now].filter((l) => !was.has(l)).map((l) => `now ${l}`),
  ];
  return `what the person is shown is set otherwise: ${changed.slice(0, 4).join("; ")}`;
}

/** Which of the panes the guard keeps a call broke, or left in or out of a mode; or null. */
export function keptPanesBroken(
  before: KeptView,
  after: KeptView,
  agentPane: string,
): string | null {
  const whose = watchedOrAgent(agentPane);
  return panesBroken(before, after, whose) ?? modeBroken(before, after, whose);
}

/**
 * Which of `before`'s panes a call put in a mode or took out of one (copy mode: the person's
 * keys then go to it, and their view scrolls), read again as `after`; null when none. The
 * guard's promise only: `--own-panes-only` fences typing, running, respawning, killing, clearing
 * and piping (README), not a pane's mode, so {@link panesBroken}, which judges that flag too,
 * leaves it out.
 */
export function modeBroken(
  before: KeptView,
  after: KeptView,
  whose: (pane: string) => string,
): string | null {
  for (const [pane, was] of before.panes) {
    const now = after.panes.get(pane) ?? null;
    if (was === null || now === null || now.mode === was.mode) continue;
    return `${whose(pane)}, ${pane}, ${now.mode ? `is in ${now.mode}` : `left ${was.mode}`}`;
  }
  return null;
}

/** How a break words a pane the guard keeps: the agent's own, or one the person watches. */
export function watchedOrAgent(agentPane: string): (pane: string) => string {
  return (pane) => pane === agentPane ? "the agent's own pane" : "a pane the person watches";
}

/**
 * Which of `before`'s panes a call broke (gone, another process, piped, its text changed), read
 * again as `after`; `whose` words a pane in the answer. Null when none.
 */
export function panesBroken(
  before: KeptView,
  after: KeptView,
  whose: (pane: string) => string,
): string | null {
  for (const [pane, was] of before.panes) {
    if (was === null) continue;
    const now = after.panes.get(pane) ?? null;
    const which = `${whose(pane)}, ${pane},`;
    if (now === null) {
      if (was.steady) return `${which} is gone`;
      continue;
    }
    if (now.pid !== was.pid) return `${which} runs another process (${was.pid} → ${now.pid})`;
    if (now.piped && !was.piped) return `${which} is piped`;
    if (!was.steady) continue;
    if (now.dead && !was.dead) return `${which} ended`;
    if (now.text !== was.text && Math.min(now.width, was.width) > 1) {
      const size = (p: KeptPane) => `${p.width}x${p.height}${p.dead ? " dead" : ""}`;
      return `${which} changed (${size(was)} → ${size(now)}): ${difference(was.text, now.text)}`;
    }
  }
  return null;
}

/**
 * Whether the pane the person's keys went to is gone, and its program was one that ends of its
 * own accord (not {@link KeptPane.steady}: a `sleep 1` a split started): tmux then gives their
 * keys to another pane of the window, which no call did.
 */
export function keysPaneEnded(before: KeptView, after: KeptView): boolean {
  const pane = before.keys?.split(" ")[2];
  if (pane === undefined) return false;
  const was = before.panes.get(pane) ?? null;
  return was !== null && !was.steady && (after.panes.get(pane) ?? null) === null;
}

/** Whether the person's keys went elsewhere, or a zoom they saw was undone. */
export function focusBroken(before: KeptView, after: KeptView): string | null {
  if (before.keys !== null && after.keys !== before.keys) {
    return `the person's keys go elsewhere: ${before.keys} → ${
      after.keys ?? "their client is gone"
    }`;
  }
  if (before.zoomed && after.window === before.window && !after.zoomed) {
    return `the window the person sees zoomed, ${before.window}, is unzoomed`;
  }
  return null;
}

function difference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 20), i + 40));
  return `from character ${i}, before ${show(a)}, after ${show(b)}`;
}
