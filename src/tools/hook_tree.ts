/**
 * Hooks read back and where tmux keeps them: `show-hooks` parsed into entries, the global
 * hooks gathered from both of tmux's trees, a hook name checked against tmux's own lists
 * (its commands take any option's name too), and the refusal of a scope tmux would not keep
 * the hook at.
 *
 * @module
 */

import { z } from "zod";
import { cutString } from "../mcp/bounds.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { int } from "../mcp/schemas.ts";
import { decodeBytes } from "../tmux/format.ts";
import { parseOptionLines } from "./option_lines.ts";
import { runNamed, type Scope, type ScopeFlags } from "./setting_scope.ts";

/** Hook names are lower-case words with dashes; an optional array index. */
const HOOK_NAME = /^[a-z][a-z0-9-]{0,63}(?:\[(\d{1,5})\])?$/;

/** One hook entry as the hook tools report it (the seed contract's shape). */
export const hookEntry = z.strictObject({
  hook_name: z.string().describe("Hook name (e.g. 'pane-exited')."),
  command: z.string().describe("tmux command string registered at that index, as tmux prints it."),
  index: int().nullable().describe(
    "Array index (every tmux hook is an array; a plain set-hook lands at 0).",
  ),
});

type HookEntry = z.infer<typeof hookEntry>;

/** Parses `show-hooks` output: `name[i] command` per set entry; a bare `name` is unset. */
function hookEntries(text: string): HookEntry[] {
  return parseOptionLines(text).filter((l) => l.raw !== null).map((l) => ({
    hook_name: l.name,
    command: l.raw!,
    index: l.index,
  }));
}

/** The scope a seed call means when it names none: the server, or what its target is. */
export function inferHookScope(scope: Scope | null, target: string | null): Scope {
  if (scope !== null) return scope;
  if (target === null) return "server";
  if (/^%\d+$/.test(target)) return "pane";
  if (/^@\d+$/.test(target)) return "window";
  return "session";
}

async function readHooks(
  ctx: TmuxContext,
  flags: string[],
  name: string | undefined,
): Promise<HookEntry[]> {
  const argv = ["show-hooks", ...flags, ...(name ? ["--", name] : [])];
  return hookEntries(decodeBytes(await runNamed(ctx, argv, "hook", name)));
}

/** Hooks of a scope; "server" means every global hook, from both of tmux's global trees. */
export async function hooksAt(
  ctx: TmuxContext,
  where: ScopeFlags,
  scope: Scope,
  name: string | undefined,
): Promise<HookEntry[]> {
  const entries = await readHooks(ctx, where.flags, name);
  if (scope !== "server" || name !== undefined) return entries;
  // tmux keeps session hooks in the global session tree and window/pane hooks in the global
  // window tree; `show-hooks -g` lists only the first.
  const seen = new Set(entries.map((e) => `${e.hook_name}[${e.index}]`));
  for (const e of await readHooks(ctx, ["-g", "-w"], undefined)) {
    if (!seen.has(`${e.hook_name}[${e.index}]`)) entries.push(e);
  }
  return entries;
}

/** Refuses what is not a hook name; the base name and the array index it gives, if any. */
export function checkHookName(name: string): { base: string; index: number | null } {
  const m = HOOK_NAME.exec(name);
  if (!m) {
    // The seed contract puts no bound on hook_name: echo only its start.
    const shown = cutString(name, 80);
    throw new ToolFailure(
      `${JSON.stringify(shown.text)}${
        shown.omittedBytes > 0 ? ` (and ${shown.omittedBytes} more bytes)` : ""
      } is not a hook name.`,
      "Hook names look like pane-exited or session-renamed[2]; show_hooks lists them.",
    );
  }
  return { base: name.replace(/\[\d+\]$/, ""), index: m[1] === undefined ? null : Number(m[1]) };
}

/** Where tmux keeps a hook: with the session options, or with the window and pane options. */
type HookTree = "session" | "window";

/**
 * Which of tmux's trees holds hook `base`, from tmux's own lists (`show-hooks -g` names the
 * session hooks, `show-hooks -gw` the window and pane ones, each by its full name and no user
 * option among them); refused when neither names it. tmux's `show-hooks NAME` and `set-hook
 * NAME` take any option's name (`status`, `default-command`), and any unambiguous start of one
 * (`pane-exite` is pane-exited), so a name is checked here, not left to them: only a hook's
 * full name reaches tmux.
 */
export async function hookTree(ctx: TmuxContext, base: string): Promise<HookTree> {
  const names = async (flags: string[]) =>
    new Set(hookNames(decodeBytes(await ctx.read(["show-hooks", ...flags]))));
  const [sessionHooks, windowHooks] = await Promise.all([names(["-g"]), names(["-g", "-w"])]);
  if (windowHooks.has(base)) return "window";
  if (sessionHooks.has(base)) return "session";
  const started = [...sessionHooks, ...windowHooks].filter((name) => name.startsWith(base));
  if (started.length === 1) {
    throw new ToolFailure(
      `${JSON.stringify(base)} is not a hook name but the start of one (tmux may take it for ` +
        `${started[0]}); hook names are taken only in full.`,
      `Give the full hook name: ${started[0]}.`,
    );
  }
  throw new ToolFailure(
    `${JSON.stringify(base)} is not a hook name (tmux has no hook by that name${
      OPTION_LIKE.test(base) ? "; it may be an option: show_option reads those" : ""
    }).`,
    "Hook names look like pane-exited or session-renamed[2]; show_hooks lists them.",
  );
}

/** Names in `show-hooks` output: `name` or `name[i] command` per line. */
function hookNames(text: string): string[] {
  return text.split("\n").filter((l) => l !== "").map((l) => l.replace(/[[ ].*$/, ""));
}

/** A lower-case dashed word, the shape of option names too. */
const OPTION_LIKE = /^[a-z][a-z0-9-]*$/;

/**
 * Refuses a scope tmux would not keep hook `base` at: told to set a window hook on a session,
 * tmux puts it on the session's current window; a session hook asked of a window or pane goes
 * to the session. Either way the reply would name a place the hook is not.
 */
export function checkHookScope(base: string, tree: HookTree, scope: Scope): void {
  if (scope === "server") return;
  if (tree === "session" && scope === "session") return;
  if (tree === "window" && scope !== "session") return;
  throw new ToolFailure(
    tree === "session"
      ? `${base} is a session hook: tmux keeps it per session or globally, not per ${scope}.`
      : `${base} is a window hook: tmux keeps it per window, per pane or globally, not per ` +
        "session.",
    tree === "session"
      ? 'Use scope "session" with a session as target, or scope "server".'
      : 'Use scope "window" (target @N) or "pane" (target %N), or "server" for every window.',
  );
}
