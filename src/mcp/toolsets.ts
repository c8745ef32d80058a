/**
 * Toolsets: which families of tools a server offers. A tool outside the selection is neither
 * listed nor callable.
 *
 * @module
 */

/** The four toolsets, from least to most reach. */
export const TOOLSETS = ["inspect", "manage", "execute", "teardown"] as const;

/** One toolset name. */
export type Toolset = typeof TOOLSETS[number];

/**
 * Not a toolset one selects: a tool declared with it exists in every selection. Only a tool
 * that reaches tmux solely through other tools on offer may use it (call_tools_batch), so it
 * can never do more than the selection allows.
 */
export const ALWAYS_ON = "always" as const;

/** What a tool declares: one of the toolsets, or {@link ALWAYS_ON}. */
export type ToolToolset = Toolset | typeof ALWAYS_ON;

/** What a server offers when nothing is said: everything but teardown. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ["inspect", "manage", "execute"];

/** What each toolset lets a model do, for `--help` and the README. */
export const TOOLSET_MEANING: Record<Toolset, string> = {
  inspect: "read only: list, read, search, wait",
  manage: "arrange: rename, select, resize, layout, titles, copy mode, buffers",
  execute: "start processes, type, run commands, options and hooks (which can run a shell)",
  teardown: "kill panes, windows, sessions and servers; clear history",
};

/** Parses a comma-separated list; throws with the offending name on an unknown one. */
export function parseToolsets(text: string): Toolset[] {
  const names = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (names.length === 0) throw new Error("no toolset named");
  const out: Toolset[] = [];
  for (const name of names) {
    if (!(TOOLSETS as readonly string[]).includes(name)) {
      throw new Error(`unknown toolset "${name}" (known: ${TOOLSETS.join(", ")})`);
    }
    if (!out.includes(name as Toolset)) out.push(name as Toolset);
  }
  return TOOLSETS.filter((t) => out.includes(t));
}
