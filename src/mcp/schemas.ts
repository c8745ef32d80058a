/**
 * Zod pieces the tool families share: ids, placements, list bounds. Field names and patterns
 * follow the seed contracts (`list_panes`, `list_windows`).
 *
 * @module
 */

import { z } from "zod";

/** A stable pane id. */
export const paneIdSchema = z.string().regex(/^%\d+$/, "a pane id such as %3").describe(
  "Stable pane id, e.g. %1.",
);

/** A stable window id. */
export const windowIdSchema = z.string().regex(/^@\d+$/, "a window id such as @2").describe(
  "Stable window id, e.g. @1.",
);

/** A stable session id. */
export const sessionIdSchema = z.string().regex(/^\$\d+$/, "a session id such as $0").describe(
  "Stable session id, e.g. $1.",
);

/** A session argument: an id or an exact name. */
export const sessionRefSchema = z.string().min(1).max(4096).describe("Session id ($1) or name.");

/** An integer as the seeds declare them (JSON Schema carries the safe-integer range). */
export const int = (): z.ZodNumber => z.number().int();

/** A count: a non-negative integer. */
export const count = (): z.ZodNumber => z.number().int().min(0);

/** How a list reports its bound: the seed contracts' `complete` and `omittedEntries`. */
export const listBound = {
  complete: z.boolean().describe("Whether every entry is in the list."),
  omittedEntries: int().describe("Entries left out to keep the result within its size bound."),
};

/** How an entry reports cut strings (seed contracts). */
export const metadataBound = {
  metadataComplete: z.boolean().describe("Whether every projected metadata string is complete."),
  omittedMetadataBytes: count().describe("UTF-8 bytes omitted from projected metadata strings."),
};

/** A pane's placement as `list_panes` reports it. */
export const panePlacementSchema = z.strictObject({
  index: int().describe("The window index in this session."),
  sessionId: sessionIdSchema,
  sessionName: z.string(),
});

/** A window's placement as `list_windows` reports it. */
export const windowPlacementSchema = z.strictObject({
  index: int().describe("The window index in this session."),
  sessionId: sessionIdSchema,
  sessionName: z.string(),
  active: z.boolean().describe("Whether this placement is current in its session."),
});
