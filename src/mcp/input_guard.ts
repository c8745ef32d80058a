/**
 * Input guards: the refusals before any keystroke, paste or process reaches a pane. A tool
 * never types into the pane the agent itself runs in, a pane a person is watching, a dead pane,
 * a pane in copy mode (or any other mode), or a pane whose input is turned off; and
 * {@link deliverInput} has tmux check the same facts again at the instant the input arrives.
 * Each refusal says why and what would lift it.
 *
 * @module
 */

import { tmuxChild } from "../tmux/foreground.ts";
import { formatLiteral, randomHex } from "../tmux/format.ts";
import { clientLabel, inputCohort, keyCopies, keyCopyFormat } from "../tmux/identity.ts";
import { chainText, type Relay, relayFrom } from "../tmux/relay.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { allOf, checkedAgain, EndedMidAct, runIf, type TmuxCondition } from "./act_step.ts";
import type { TmuxContext } from "./context.ts";
import { ToolFailure } from "./errors.ts";
import { notOwnedFormat, requireOwned } from "./ownership.ts";
import { paneUnwatched } from "./unwatched.ts";

/** What a caller may lift. */
export interface InputGuardOptions {
  /**
   * Lifts only the refusal of the caller's own pane, and of a pane running a tmux client
   * (relay.ts `relayFrom`) unless the pane that client shows is watched.
   */
  readonly force?: boolean;
  /** Skip the dead-pane refusal (respawning a dead pane is the point). */
  readonly allowDead?: boolean;
  /** Skip the mode refusal (leaving copy mode is the point). */
  readonly allowMode?: boolean;
  /**
   * Skip the input-off refusal: for an act that types nothing (respawning starts a process,
   * which no `select-pane -d` stops).
   */
  readonly allowInputOff?: boolean;
  /**
   * Skip the refusal of a pane that runs a tmux client (relay.ts `relayFrom`): for an act that types
   * nothing (respawning ends the client).
   */
  readonly allowRelay?: boolean;
  /** What tmux must name the pane's program (`pane_current_command`) at the instant. */
  readonly command?: string;
  /** System facts tmux checks first (see {@link TmuxCondition.shell}). */
  readonly shellConditions?: readonly TmuxCondition[];
  /** The refusal for each of {@link shellConditions} when it does not hold. */
  readonly shellRefusals?: readonly ToolFailure[];
  /**
   * The input is a paste (with any keys around it): refused where tmux would copy keys to
   * other panes (synchronize-panes), since it does not copy the paste alike.
   */
  readonly paste?: boolean;
  /**
   * A claim on the pane the input needs (run_command's run mark; respawn_pane's keeping a
   * person's zoom): a format tmux checks with the pane's other facts at the instant of the
   * input, and, when that check fails, the refusal to throw if it is the claim that does not
   * hold (null: it holds, the failure was another's). `take`: the command that takes the
   * claim, run first once the check holds, so that no command a person's hook could hold the
   * line after comes between the check and it.
   */
  readonly claim?: {
    readonly format: string;
    readonly refusal: () => Promise<ToolFailure | null>;
    readonly take?: readonly string[];
    /**
     * The command that gives the claim back as it was before `take`: run in the same step
     * should tmux stop the input before anything of it went (before the paste, when there is
     * one: keys before it only prepare the line).
     */
    readonly untake?: readonly string[];
    /**
     * A format that holds once `take` has run, as long as the claim is still this call's:
     * tmux checks it, for `format`, again before each later input command (see
     * {@link deliverInput}).
     */
    readonly held?: string;
  };
}

/** The mode tmux shows a command's output in, over the pane (run-shell, display-message -p). */
const VIEW_MODE = "view-mode";

/**
 * What lifts a pane's view-mode, and where it may come from: nobody may have chosen it. A
 * person's hook that runs a shell command as a client attaches puts its output there, for
 * tmux-mcp's own client too when the output comes later than its attach waits for.
 */
const VIEW_MODE_LIFT = "It shows a command's output, perhaps from a tmux hook " +
  "(client-attached, pane-focus-in) that ran when a client attached, tmux-mcp's own included: " +
  "exit_copy_mode leaves it; or wait for the person to leave it.";

/**
 * A pane that runs a tmux client, as tmux checks it at the instant of the input (any server's
 * client): such a pane passes what is typed there on to the pane it shows (a pane a person
 * watches, or the agent's own: the usual nesting, an agent's tmux attached in a pane of an
 * outer one), and on again through any client running there (relay.ts `relayFrom`).
 */
export const NO_RELAY = "#{||:#{!=:#{pane_current_command},tmux}," +
  "#{&&:#{==:#{history_size},0},#{&&:#{==:#{cursor_x},0},#{&&:#{==:#{cursor_y},0}," +
  "#{==:#{alternate_on},0}}}}}";

/**
 * Refuses input into `what`, a pane that runs a tmux client (see {@link relayFrom}): unless
 * `force`, always; forced, still when a pane the keys reach through clients of this server (the
 * chain followed to its end) is watched by a person other than those clients (and no
 * `--allow-attended-input`).
 */
function refuseRelay(
  ctx: TmuxContext,
  snapshot: Snapshot,
  what: string,
  relay: Relay,
  force: boolean,
): void {
  const client = relay.hops[0]?.client;
  if (relay.unknown) {
    throw new ToolFailure(
      `${what} runs a tmux client of this server, and what is typed there goes on to a pane ` +
        "this read did not hold (it changed meanwhile): nothing was typed.",
      "Look again (list_panes), then try again.",
    );
  }
  if (client === undefined) {
    if (force) return;
    // Under a wrapper (script, sudo): found by its process (wrapped_relay.ts `tmuxUnder`).
    const program = relay.onward?.command ?? "tmux";
    const under = tmuxChild(program) ? "" : ` under ${JSON.stringify(program)}`;
    throw new ToolFailure(
      `${what} runs tmux${under} (a client of another tmux server, perhaps the one this agent ` +
        "runs in): " +
        "what is typed there goes on to the pane that client shows, which may be watched by " +
        "a person or be this server's own.",
      "Type into that pane on its own server (socket_name), or pass force: true if the client " +
        "itself is meant.",
    );
  }
  const shown = chainText(relay);
  const name = clientLabel(client);
  if (!force) {
    throw new ToolFailure(
      `${what} runs a tmux client of this server (${name}) showing ${shown}: what is typed ` +
        `there goes on to ${shown}.`,
      `Type into ${shown} itself (its guards then apply), or pass force: true if that is meant.`,
    );
  }
  // Each pane reached is seen by everyone whose client shows its window (zoomed or not), its
  // whole session (tmux -CC) or a preview; the chain's own clients only pass the keys on.
  const passing = new Set(relay.hops.map((hop) => hop.client.name));
  const attended = ctx.attended(snapshot);
  const people = [
    ...new Set(relay.reached.flatMap((p) => attended.get(p.id) ?? [])),
  ].filter((c) => !passing.has(c.name));
  if (people.length > 0 && !ctx.config.allowAttendedInput) {
    throw new ToolFailure(
      `${what} runs a tmux client of this server (${name}) showing ${shown}, which is being ` +
        `watched by a person (client ${people.map(clientLabel).join(", ")}): what is typed ` +
        "there would reach them.",
      "Ask the person, use another pane (create_window or split_window), or start tmux-mcp with --allow-attended-input.",
    );
  }
}

/**
 * The clients of people watching `paneId`, as a refusal names them (the input and destroy
 * guards alike).
 */
export function watchers(ctx: TmuxContext, snapshot: Snapshot, paneId: string): string {
  const clients = ctx.attended(snapshot).get(paneId) ?? [];
  return clients.map(clientLabel).join(", ");
}

/**
 * Refuses input (typing, pasting, running, respawning) into `pane` unless every guard passes.
 * When its window has synchronize-panes on, the caller's own pane and watched panes are
 * refused anywhere in that cohort; a dead sibling, one in a mode or one with input off is not,
 * since tmux copies no key to any of them (see identity.ts `keyCopyFormat`). Returns the panes
 * the input may reach.
 */
export function guardInput(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions = {},
): PaneRow[] {
  const cohort = inputCohort(snapshot, pane);
  const caller = ctx.caller(snapshot);
  const attended = ctx.attended(snapshot);
  const via = (p: PaneRow) =>
    p.id === pane.id
      ? `Pane ${p.id}`
      : `Pane ${p.id} (synchronized with ${pane.id} in ${pane.windowId})`;
  for (const p of cohort) {
    if (p.id === caller.paneId && !options.force) {
      throw new ToolFailure(
        `${
          via(p)
        } is the pane this MCP server runs in; typing there would feed the agent its own input.`,
        "Pass force: true only if you really mean to type into your own pane.",
      );
    }
    if (attended.has(p.id) && !ctx.config.allowAttendedInput) {
      throw new ToolFailure(
        `${via(p)} is being watched by a person (client ${
          watchers(ctx, snapshot, p.id)
        }); input there would interfere with them.`,
        "Ask the person, use another pane (create_window or split_window), or start tmux-mcp with --allow-attended-input.",
      );
    }
    // (None from a pane that takes no keys: relay.ts takesKeys.)
    const relay = options.allowRelay ? null : relayFrom(snapshot, p);
    if (relay) refuseRelay(ctx, snapshot, via(p), relay, options.force ?? false);
    // Only what tmux gives the keys to: the pane itself, or a sibling alive and in no mode.
    if (p.id !== pane.id) continue;
    if (p.dead && !options.allowDead) {
      throw new ToolFailure(
        `${via(p)} is dead: its process exited${
          p.deadStatus !== null ? ` with status ${p.deadStatus}` : ""
        }.`,
        "respawn_pane restarts it; capture_pane still reads what it left.",
      );
    }
    if (p.inMode && !options.allowMode) {
      throw new ToolFailure(
        `${via(p)} is in ${p.mode || "a mode"}; ${
          options.paste
            ? "a paste would reach the program unseen, the pane's view held by the mode"
            : "keys would drive the mode, not the program"
        }.`,
        p.mode === VIEW_MODE
          ? VIEW_MODE_LIFT
          : "exit_copy_mode leaves it; or wait for the person to leave it.",
      );
    }
    // tmux drops every key and paste sent there without a word, and copies none to its
    // synchronized siblings either: it stops at this pane.
    if (p.inputOff && !options.allowInputOff) {
      throw new ToolFailure(
        `${via(p)} has input turned off (select-pane -d): nothing typed or pasted would arrive.`,
        "`select-pane -e` turns it back on (someone chose to turn it off: ask the person " +
          "first), or use another pane (create_window or split_window).",
      );
    }
  }
  return cohort;
}

/**
 * What tmux re-checks at the instant input reaches `pane`: nobody watches it (unless
 * `--allow-attended-input`), it is alive, in no mode and takes input (unless the caller lifts
 * those).
 */
export function inputCondition(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions = {},
): TmuxCondition {
  const parts: string[] = [];
  if (!ctx.config.allowAttendedInput) parts.push(paneUnwatched(snapshot, pane.id).format);
  if (!options.allowDead) parts.push("#{!=:#{pane_dead},1}");
  // A count of modes, stacked (view-mode over copy mode is 2): only 0 is none.
  if (!options.allowMode) parts.push("#{==:#{pane_in_mode},0}");
  if (!options.allowInputOff) parts.push("#{!=:#{pane_input_off},1}");
  if (!options.force && !options.allowRelay) parts.push(NO_RELAY);
  if (options.command !== undefined) {
    parts.push(`#{==:#{pane_current_command},${formatLiteral(options.command)}}`);
  }
  return { target: pane.id, format: allOf(parts) };
}

/**
 * Expanded for the pane input goes to: 1 while no pane the input may reach passes the
 * condition `test` (with synchronize-panes on for it, every pane of its window: broader than
 * the panes tmux copies keys to, the safe side).
 */
function noneReached(test: string): string {
  const mark = `#{?${test},X,}`;
  return `#{==:#{?#{pane_synchronized},#{P:${mark}},${mark}},}`;
}

/**
 * For input forced into panes that run clients of this server (relay.ts): formats that hold
 * while each client on the way still shows the pane it showed at the read, its session's
 * current window's active pane (a loop over sessions sees each one's), so that tmux types only
 * where the guard judged: a person switching a client's window meanwhile would send the keys
 * to a pane nobody judged.
 */
export function relaysHeld(snapshot: Snapshot, cohort: readonly PaneRow[]): string[] {
  const held = new Set<string>();
  for (const p of cohort) {
    for (const hop of relayFrom(snapshot, p)?.hops ?? []) {
      // One with an active pane of its own: the window, whichever of its panes is active.
      const shows = hop.client.ownActivePane
        ? `#{?#{==:#{window_id},${hop.shown.windowId}},,X}`
        : `#{?#{==:#{pane_id},${hop.shown.id}},,X}`;
      held.add(`#{==:#{S:#{?#{==:#{session_id},${hop.client.sessionId}},${shows},}},}`);
    }
  }
  return [...held];
}

/** Refuses a paste into `pane` when tmux would copy its keys to other panes. */
function requireAlone(snapshot: Snapshot, pane: PaneRow): void {
  const others = keyCopies(snapshot, pane);
  if (others.length === 0) return;
  throw new ToolFailure(
    `Pane ${pane.id} is synchronized with ${others.map((p) => p.id).join(", ")} ` +
      `(synchronize-panes in ${pane.windowId}): tmux copies what is typed there to them, but ` +
      `not a paste, which would arrive in ${pane.id} alone (and an Enter after it in all of ` +
      "them). Nothing was pasted.",
    "Turn synchronize-panes off for that window (set_synchronize_panes), or type with " +
      "send_keys, which reaches them all.",
  );
}

/**
 * Input that stopped part-way ({@link deliverInput}): the first `went` of `commands` reached
 * the pane, then tmux's check before the next one no longer held, and it and the rest were not
 * sent. Its message says which went and which did not.
 */
export class PartialInput extends ToolFailure {
  constructor(
    message: string,
    hint: string,
    readonly went: number,
    readonly commands: readonly (readonly string[])[],
    /** The panes what went in may have reached: the pane, and those synchronize-panes copies to. */
    readonly reachedPanes: readonly string[],
    /** The pane ended during the step: past `went`, what was sent is not known. */
    readonly ended = false,
  ) {
    super(message, hint);
  }
}

/**
 * The input into `paneId` stopped because the pane ended during the step (act_step.ts
 * EndedMidAct): the `went` commands before the first check made again went (and may have
 * reached it before it ended). tmux stops at the check that finds the pane gone: with one
 * command after that first check, that is the check, and the command did not go; with more,
 * any of them up to the check that found it gone may have gone too. `others`: the panes
 * synchronize-panes copied the keys to, as read.
 */
function endedMidInput(
  paneId: string,
  commands: readonly (readonly string[])[],
  went: number,
  others: readonly string[],
): ToolFailure {
  const words = commands.map(inputWords);
  const hint = "Look at what is there now (list_panes) before going on.";
  const sure = Math.max(went, 0);
  const known = commands.length - sure <= 1;
  if (sure === 0 && known) {
    return new ToolFailure(`Nothing was sent to ${paneId}: it ended meanwhile.`, hint);
  }
  const also = others.length > 0 ? ` (and, through synchronize-panes, ${others.join(", ")})` : "";
  const did = (from: number, to?: number) =>
    words.slice(from, to).map((w) => w.did).join(", then ");
  const told = known
    ? `${did(0, sure)} may have reached it${also} before it ended. ${
      capital(words.slice(sure).map((w) => w.not).join("; "))
    }.`
    : `${did(0)} may have reached it${also} before it ended${
      sure > 0 ? ` (${did(0, sure)} went before tmux checked again)` : ""
    }; nothing more went once tmux found it gone.`;
  return new PartialInput(
    `${paneId} ended during the step (a person's tmux hook held it between its commands): ${told}`,
    hint,
    sure,
    commands,
    [paneId, ...others],
    true,
  );
}

/**
 * The panes tmux listed in a step's output (`marker` lines: the pane input goes to and those it
 * copies keys to), or `fallback` when it listed none.
 */
function listedPanes(stdout: Uint8Array, marker: string, fallback: readonly string[]): string[] {
  const lines = new TextDecoder().decode(stdout).split("\n").filter((l) => l.startsWith(marker));
  if (lines.length === 0) return [...fallback];
  return [
    ...new Set(
      lines.flatMap((l) => [...l.slice(marker.length).matchAll(/%\d+/g)].map((m) => m[0])),
    ),
  ];
}

/** What an input command did, and what it would have done: for a reply. */
function inputWords(command: readonly string[]): { did: string; not: string } {
  if (command[0] === "paste-buffer") {
    return { did: "pasted the text", not: "the text was not pasted" };
  }
  if (command[0] !== "send-keys") {
    return { did: `ran ${command[0]}`, not: `${command[0]} did not run` };
  }
  if (command.includes("-l")) return { did: "typed the text", not: "the text was not typed" };
  const keys = command.slice(3).filter((k) => k !== "--" && k !== "-H");
  const named = keys.join(" ");
  return named === "Enter"
    ? { did: "pressed Enter", not: "Enter was not pressed" }
    : { did: `pressed keys ${named}`, not: `keys ${named} were not pressed` };
}

const capital = (s: string) => `${s[0].toUpperCase()}${s.slice(1)}`;

/**
 * What changed at the instant tmux stopped the input (`why`: a refusal of a fresh read, or
 * null when it names nothing), as a clause.
 */
const STOPPED_BECAUSE = "tmux's check before the rest no longer held (a person's tmux hook " +
  "held tmux-mcp's step between its commands): at that instant a person's client came to " +
  "show the pane, or it died, entered a mode, had its input turned off or changed its " +
  "synchronize-panes";

/**
 * The refusal of input tmux stopped before any of it went, though the step's first check
 * held: a fresh read says what changed, when it can.
 */
async function nothingSent(
  ctx: TmuxContext,
  pane: PaneRow,
  options: InputGuardOptions,
): Promise<ToolFailure> {
  const said = `Nothing was sent to ${pane.id}: ${STOPPED_BECAUSE}`;
  try {
    const now = await ctx.guardSnapshot(pane.id);
    guardInput(ctx, now, ctx.pane(now, pane.id), options);
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    return new ToolFailure(`${said}. ${error.message}`, error.hint);
  }
  return new ToolFailure(
    `${said}.`,
    "Look again with get_pane_info; ask the person, or use a pane nobody watches.",
  );
}

/**
 * Sends input into `pane`, checked twice: {@link guardInput} against the snapshot (refusals
 * that say why), then the same facts re-checked by tmux at the instant the input arrives
 * ({@link inputCondition}, {@link runIf}; `prelude` runs on the same line, after the shell
 * conditions and right before tmux's last check): there, under `--own-panes-only`, that every
 * pane the input may reach is this server's, and unless `force` that none is the caller's,
 * also a pane moved into a synchronized window since the read. tmux checks the same facts
 * again right before each input command after the first (a person's hook may hold the line
 * after any command: act_step.ts checkedAgain), and synchronize-panes as read at every check.
 * Returns the ids of the panes the input reached: the pane alone with synchronize-panes off;
 * on, those tmux listed in that step before and after the input (the pane and those it copies
 * keys to). Input tmux stopped part-way throws a {@link PartialInput} saying what went and what
 * did not; stopped before any of it went, a refusal that says what changed.
 *
 * `buffer`: the name of a transient paste buffer the commands paste and delete, filled by the
 * prelude, or else by `load` before each attempt. A refusal in tmux deletes it in the same
 * step, so it never outlives a refused attempt (a person's paste takes the newest buffer).
 */
export async function deliverInput(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  options: InputGuardOptions,
  commands: readonly (readonly string[])[],
  prelude: readonly (readonly string[])[] = [],
  buffer?: { readonly name: string; readonly load?: () => Promise<unknown> },
): Promise<string[]> {
  let current = snapshot;
  let target = pane;
  const what = `Input into ${pane.id}`;
  const marker = `tmux-mcp-reached-${randomHex(8)}:`;
  const reachedFormat = `${marker}#{?#{pane_synchronized},#{P:#{?${
    keyCopyFormat(pane.id)
  },#{pane_id} ,}},${pane.id}}`;
  const owner = ctx.config.ownPanesOnly ? ctx.config.owner : undefined;
  const shells = options.shellConditions ?? [];
  // Checked again by tmux right before each input command after the first (a person's hook
  // may hold the line after any command: act_step.ts checkedAgain); should it stop there, the
  // transient buffer not pasted yet goes, and so does the claim, if nothing of the input went.
  const pasteAt = commands.findIndex((c) => c[0] === "paste-buffer");
  const stopped = (j: number) => [
    ...(buffer !== undefined && j <= pasteAt ? [["delete-buffer", "-b", buffer.name]] : []),
    ...(options.claim?.untake && j <= Math.max(0, pasteAt) ? [options.claim.untake] : []),
  ];
  const input = commands.map((c, j) => checkedAgain(c, stopped(j)));
  for (let attempt = 0; attempt < 2; attempt++) {
    const cohort = guardInput(ctx, current, target, options);
    if (options.paste) requireAlone(current, target);
    await requireOwned(ctx, cohort, what);
    // One condition after the shell's (each more would quote the keys once more): tmux checks
    // the pane, and every pane the input may reach for owner marks and the caller's pane.
    const parts = [inputCondition(ctx, current, target, options).format];
    // Forced through clients of this server: each still shows the pane the guard judged.
    if (options.force) parts.push(...relaysHeld(current, cohort));
    if (owner) parts.push(noneReached(notOwnedFormat(owner)));
    const caller = options.force ? null : ctx.callerFormat(current);
    if (caller !== null) parts.push(noneReached(caller));
    if (options.paste) {
      const copied = `#{&&:#{!=:#{pane_id},${pane.id}},${keyCopyFormat(pane.id)}}`;
      parts.push(`#{==:#{?#{pane_synchronized},#{P:#{?${copied},X,}},},}`);
    }
    // synchronize-panes as read, at every check: off, the input reaches the pane alone; on,
    // tmux lists the panes it copies keys to before the input and after it.
    const synced = target.synchronized;
    parts.push(`#{==:#{pane_synchronized},${synced ? 1 : 0}}`);
    // Checked again before each input command after the first: the same facts, and the claim
    // as taken (still this call's).
    const again = [...parts];
    if (options.claim) parts.push(options.claim.format);
    const held = options.claim?.take ? options.claim.held : options.claim?.format;
    if (held !== undefined) again.push(held);
    await buffer?.load?.();
    const reachedAt = ["display-message", "-p", "-t", pane.id, reachedFormat];
    const before = [
      ...(options.claim?.take ? [options.claim.take] : []),
      ...(synced ? [reachedAt] : []),
    ];
    const { failed, partialAt, stdout } = await runIf(
      ctx,
      [...shells, { target: pane.id, format: allOf(parts) }],
      [...before, ...input, ...(synced ? [reachedAt] : [])],
      prelude,
      {
        partial: true,
        recheck: [{ target: pane.id, format: allOf(again) }],
        ...(buffer === undefined ? {} : {
          refused: [["delete-buffer", "-b", buffer.name]],
          // Filled by the prelude, it exists from the last check on; loaded, from the first.
          refusedFrom: buffer.load ? 0 : shells.length,
        }),
      },
    ).catch((error) => {
      if (!(error instanceof EndedMidAct)) throw error;
      // Synchronized, the panes it copies keys to were listed before any input (the output of
      // a failed step is not kept: the cohort as read stands in for them).
      const others = synced ? cohort.map((p) => p.id).filter((id) => id !== pane.id) : [];
      throw endedMidInput(pane.id, commands, error.at - before.length, others);
    });
    // Synchronized: the panes tmux listed right before the input (and after it).
    const reached = synced ? listedPanes(stdout, marker, cohort.map((p) => p.id)) : [pane.id];
    if (partialAt !== null) {
      const went = partialAt - before.length;
      if (went === 0) throw await nothingSent(ctx, pane, options);
      const words = commands.map(inputWords);
      const others = reached.filter((id) => id !== pane.id);
      const also = others.length > 0 ? ` and, through synchronize-panes, ${others.join(", ")}` : "";
      const all = [pane.id, ...others].join(", ");
      throw new PartialInput(
        `${capital(words.slice(0, went).map((w) => w.did).join(", then "))} into ${pane.id}` +
          `${also}, but then ${STOPPED_BECAUSE}. ${
            capital(words.slice(went).map((w) => w.not).join("; "))
          }${others.length > 0 ? ` in any of them` : ""}.`,
        `Look at ${all} (capture_pane) before going on: what went in is there; ask the ` +
          "person, or use a pane nobody watches.",
        went,
        commands,
        [pane.id, ...others],
      );
    }
    if (failed === null) return reached;
    if (failed < shells.length) {
      throw options.shellRefusals?.[failed] ?? new ToolFailure(`Nothing was sent to ${pane.id}.`);
    }
    // Another caller's claim is no fact a fresh read changes: said at once.
    const taken = await options.claim?.refusal();
    if (taken) throw taken;
    // Read again: the guards above say what changed (whose pane moved in, who watches).
    current = await ctx.guardSnapshot(pane.id);
    target = ctx.pane(current, pane.id);
  }
  // run_command also asks tmux that the shell holds the terminal: a program another caller
  // started may have taken it.
  const program = options.command === undefined
    ? ""
    : `, a program other than ${JSON.stringify(options.command)} came to the foreground`;
  throw new ToolFailure(
    `Nothing was sent to ${pane.id}: at that instant a person's client came to show it, it ` +
      `died, entered a mode or had its input turned off${program}, or a pane moved into its ` +
      "synchronized window.",
    "Look again with get_pane_info; ask the person, or use a pane nobody watches.",
  );
}
