/**
 * Which declared tools are on offer: the selected toolsets, `--tools` and `--deny-tools`, and
 * the check, once every tool is declared, that those flags name only tools that exist and can
 * be on offer (a mistake the person who started the server must hear of, not a tool silently
 * missing). The registry (registry.ts) asks both.
 *
 * @module
 */

import { ALWAYS_ON, type Toolset, type ToolToolset } from "./toolsets.ts";
import { meantName, meantPhrase } from "../near_miss.ts";

/** Which tools of the selected toolsets exist: `--tools` and `--deny-tools`. */
export interface ToolSelection {
  /** Only these (absent: all). */
  readonly tools?: readonly string[];
  /** Not these. */
  readonly denyTools?: readonly string[];
  /** The flag or variable that gave each, for messages (default: the flags). */
  readonly from?: {
    readonly tools?: string;
    readonly denyTools?: string;
    readonly toolsets?: string;
  };
}

/** A selection that names a tool that does not exist (or cannot, in these toolsets). */
export class ToolSelectionError extends Error {
  /** The flag or environment variable to correct. */
  readonly source: string;

  /** The message says what is wrong and lists the valid names. */
  constructor(message: string, source: string) {
    super(message);
    this.name = "ToolSelectionError";
    this.source = source;
  }
}

/** Whether a tool of `toolset` named `name` is on offer: its toolset, --tools, --deny-tools. */
export function offers(
  name: string,
  toolset: ToolToolset,
  selection: ToolSelection,
  toolsets: ReadonlySet<Toolset>,
): boolean {
  const { tools: only, denyTools: denied } = selection;
  if (only && !only.includes(name)) return false;
  if (denied?.includes(name)) return false;
  return toolset === ALWAYS_ON || toolsets.has(toolset);
}

/**
 * Checks the names of `--tools` and `--deny-tools` once every tool is `declared` (with its
 * toolset): a name no tool has, or a tool named in `--tools` whose toolset is not selected, is a
 * mistake the person who started the server must hear of, not a tool silently missing; so is a
 * selection that leaves none of them on offer (`offered`: how many are).
 */
export function checkSelection(
  declared: ReadonlyMap<string, ToolToolset>,
  selection: ToolSelection,
  selected: ReadonlySet<Toolset>,
  offered: number,
): void {
  const valid = () => [...declared.keys()].sort().join(", ");
  const from = selection.from ?? {};
  const toolsFrom = from.tools ?? "--tools";
  const lists = [
    [toolsFrom, selection.tools],
    [from.denyTools ?? "--deny-tools", selection.denyTools],
  ] as const;
  for (const [source, names] of lists) {
    const unknown = (names ?? []).filter((n) => !declared.has(n));
    if (unknown.length > 0) {
      const known = [...declared.keys()];
      const meant = meantPhrase(unknown, (n) => meantName(n, known));
      throw new ToolSelectionError(
        `${source}: no tool is named ${unknown.map((n) => JSON.stringify(n)).join(", ")}` +
          `${meant ? ` (${meant})` : ""}. Valid names: ${valid()}.`,
        source,
      );
    }
  }
  const outside = (selection.tools ?? []).filter((n) => {
    const toolset = declared.get(n);
    return toolset !== ALWAYS_ON && !selected.has(toolset as Toolset);
  });
  if (outside.length > 0) {
    const needs = outside.map((n) => `${n} (${declared.get(n)})`).join(", ");
    const toolsetsFrom = from.toolsets ?? "--toolsets";
    const toolsets = toolsetsFrom === "--read-only" || toolsetsFrom === "TMUX_MCP_READ_ONLY"
      ? `--toolsets in place of ${toolsetsFrom}`
      : toolsetsFrom;
    throw new ToolSelectionError(
      `${toolsFrom} names tools of toolsets that are not selected: ${needs}. Add their ` +
        `toolsets to ${toolsets}, or leave them out of ${toolsFrom}.`,
      toolsFrom,
    );
  }
  if (offered === 0) {
    const source = selection.denyTools ? from.denyTools ?? "--deny-tools" : toolsFrom;
    throw new ToolSelectionError(
      `${source} leaves no tool on offer: a server without tools has nothing to do.`,
      source,
    );
  }
}
