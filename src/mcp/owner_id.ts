/**
 * What an owner id (`--owner`) may be: safe inside a tmux format and a shell word, and short.
 * A module of its own, so the command line checks it without loading tmux code.
 *
 * @module
 */

/** 1 to 64 letters, digits, `.`, `_` or `-`. */
export const OWNER_ID = /^[A-Za-z0-9._-]{1,64}$/;
