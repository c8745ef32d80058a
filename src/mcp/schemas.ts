/**
 * Zod pieces the tool families share: ids, placements, list bounds. Field names and patterns
 * follow the seed contracts (`list_panes`, `list_windows`).
 *
 * @module
 */

import { z } from "zod";

/**
 * A stable pane id: its pattern says what it looks like, so it spends no words. A refusal says
 * what a model most often sends instead (`main:0.1`) is not taken, and where the ids are.
 */
export const paneIdSchema = z.string().regex(
  /^%\d+$/,
  "a pane id such as %3, not a tmux target (list_panes lists the ids)",
);

/** A stable window id. */
export const windowIdSchema = z.string().regex(/^@\d+$/, "a window id such as @2").describe(
  "Stable window id, e.g. @1.",
);

/** A stable session id. */
export const sessionIdSchema = z.string().regex(/^\$\d+$/, "a session id such as $0").describe(
  "Stable session id, e.g. $1.",
);

/**
 * A string whose length is checked on every call but not listed in the tool's schema: a sanity
 * bound on a name, target or path that a model never comes near, while every byte of a listed
 * schema is paid on every turn. A bound a caller may meet (the size of a paste) is listed
 * instead, with `.max()`.
 */
export function checkedString(max: number, min = 1): z.ZodString {
  return z.string().refine((s) => s.length >= min && s.length <= max, {
    message: min > 0
      ? `must be ${min} to ${max} characters long`
      : `must be at most ${max} characters long`,
  });
}

/**
 * An optional flag, false when omitted. Listed as a plain optional boolean (`default: false`
 * says nothing an absent flag does not), handed to the tool as a boolean.
 */
export const flag = (): z.ZodPipe<z.ZodOptional<z.ZodBoolean>, z.ZodTransform<boolean>> =>
  z.boolean().optional().transform((v) => v ?? false);

/** What a window id argument's refusal says (see {@link paneIdSchema}). */
export const WINDOW_ID_ARG =
  "a window id such as @2, not a tmux target (list_windows lists the ids)";

/**
 * A window id argument: its pattern says what it looks like, so it spends no words (outputs
 * use {@link windowIdSchema}, whose words seeds 001 and 003 fix).
 */
export const windowIdArg = z.string().regex(/^@\d+$/, WINDOW_ID_ARG);

/**
 * A session argument: an id (`$N`) or an exact name. It spends no words: seeds 001 and 003 fix
 * their own ("Session id ($1) or name."), the other tools' descriptions say what they need.
 */
export const sessionRefSchema = checkedString(4096);

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
