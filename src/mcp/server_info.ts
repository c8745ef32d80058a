/**
 * What the server says about itself at the start of a connection, in one module without the
 * SDK: the SDK server (server.ts) and the front desk (front_desk.ts) say exactly the same.
 *
 * @module
 */

/** The server's name in `serverInfo`. */
export const SERVER_NAME = "tmux-mcp";

/** Explains the server to a client at initialization. */
export const INSTRUCTIONS =
  "tmux-mcp lets you see and drive tmux. Start with list_panes (or list_sessions) to learn ids; " +
  "target panes by id (%N), windows by id (@N), sessions by id ($N) or name. isCallerPane marks " +
  "the pane this server runs in and isAttended marks panes a person is watching: leave both " +
  "alone unless asked. Every tool takes socket_name (tmux -L) to reach another tmux server than " +
  "the one this server was started for; list_servers finds them.";

/**
 * How long a client may keep `tools/list` and `server/discover` (protocol 2026-07-28 lets them be
 * cached; without a hint they are stale at once): the tool list is fixed when the process starts
 * (toolsets are chosen by its flags) and never changes while it runs, so a day, the longest the
 * SDK's client keeps anything. Private: another process of this server, started with other
 * flags, answers with another list under the same name.
 */
export const FIXED_FOR_THE_PROCESS: { readonly ttlMs: number; readonly cacheScope: "private" } = {
  ttlMs: 86_400_000,
  cacheScope: "private",
};
