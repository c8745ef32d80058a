/**
 * What a resource is, as a family file declares it ({@link ResourceSpec}, and the {@link Feed}
 * its watch runs), and how one is put on an SDK server: registered by its fixed URI or its
 * template (a template's listing bounded, its completions safe to look up), read, and a failed
 * read answered as a protocol error a person can read. Who is told that a resource changed, and
 * how under each protocol version, is resources.ts's.
 *
 * @module
 */

import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  UriTemplate,
} from "@modelcontextprotocol/server";
import { boundCompletions, fitEntries } from "./bounds.ts";
import { learnSocket, type TmuxContext } from "./context.ts";
import { logLine } from "./call_log.ts";
import { clip, failureText, MAX_ECHO_CHARS } from "./errors.ts";

/** A resource as a family file declares it. */
export interface ResourceSpec {
  /** Its registration name (unique). */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly mimeType: string;
  /** A fixed URI (`tmux://server`) or a URI template (`tmux://pane/{pane}`, RFC 6570). */
  readonly uri: string;
  /** The resources a template stands for now; absent, they are not listed one by one. */
  readonly list?: (ctx: TmuxContext) => Promise<readonly { uri: string; name: string }[]>;
  /** The values a template's variable may take that start with what was typed (completion). */
  readonly complete?: Readonly<
    Record<string, (typed: string, ctx: TmuxContext) => Promise<readonly string[]>>
  >;
  /** The resource's text at `uri` (a template's variables filled in). */
  readonly read: (
    uri: string,
    variables: Readonly<Record<string, string>>,
    ctx: TmuxContext,
  ) => Promise<string>;
  /**
   * Starts calling `changed` whenever the resource at `uri` may have changed. Called only
   * while some client is subscribed to `uri` (under either protocol), stopped when the last one
   * leaves. Calls may come in bursts: updates are coalesced (resources.ts). A subscription is
   * answered once the feed is `ready`, so a change after the answer is never missed.
   */
  readonly watch?: (uri: string, ctx: TmuxContext, changed: () => void) => Feed;
  /**
   * Throws (a ToolFailure saying why) when `uri`, though it fits the template, names nothing
   * this resource could be on this server (`tmux://pane/abc`, a host not given to `--ssh`):
   * such a URI is refused before any watch starts. The same test as a read's, so that what a
   * read refuses is never subscribed to (held, counted toward the limits, and told nothing).
   */
  readonly check?: (uri: string, ctx: TmuxContext) => void;
  /**
   * Starts calling `changed` whenever the resources this template lists (see `list`) may
   * have come or gone; returns what stops it. Run while a client may hold the list: one that
   * listed resources under 2025-11-25, or listens for `resourcesListChanged` under 2026-07-28.
   */
  readonly watchList?: (ctx: TmuxContext, changed: () => void) => () => void;
  /**
   * The tools that return what it holds: it is on offer only while each of them is, so that
   * `--tools`, `--deny-tools` and the toolsets fence what a client reads either way.
   */
  readonly tools: readonly string[];
}

/** A running watch of a resource. */
export interface Feed {
  /**
   * Settles once the feed sees changes (or has failed to start and is trying again): a
   * change after that is told. Never rejects.
   */
  readonly ready: Promise<void>;
  /** Stops telling. */
  stop(): void;
}

/** Room a template's listing leaves for the other resources listed with it. */
const LISTED_BESIDE_BYTES = 4_096;

function isTemplate(spec: ResourceSpec): boolean {
  return /\{[^}]+\}/.test(spec.uri);
}

/**
 * Longest resource URI looked at: no tmux URI comes near it (a socket name is at most 256
 * characters, 2 304 percent-encoded, and a host one given to `--ssh`). The SDK's UriTemplate
 * throws past a million characters, which answered a read, a subscription, or a whole listen
 * stream, with an internal error.
 */
export const MAX_URI_CHARS = 8_192;

/** Why `uri` is not looked at (too long), in one sentence; null when it is. */
export function uriTooLong(uri: string): string | null {
  if (uri.length <= MAX_URI_CHARS) return null;
  return `A resource URI is at most ${MAX_URI_CHARS} characters; this one has ${uri.length}: ` +
    "resources/list and resources/templates/list show the resources.";
}

/** The query a resource URI may have, in the order its one spelling has it. */
const QUERY_KEYS: readonly string[] = ["socket", "host"];

/**
 * The one spelling of the resource `uri` names: rebuilt from what a read takes out of it (its
 * scheme, kind and path as `new URL` reads them, then `socket=` and `host=` in that order, each
 * value encoded as `encodeURIComponent` encodes it: how resources/list writes a job's socket and
 * host, and how the SDK fills a template's `{?socket,host}`). Null when `uri` is no URL, or its
 * query holds what no resource takes (another key, a key twice): such a URI names nothing, and
 * is refused as such.
 *
 * A `?socket=` naming this server's own socket stays: it is a resource of its own (as the
 * templates give it; resources/list gives the bare URI), not another spelling of the bare one.
 * Whether a name is this server's socket can depend on tmux's socket folder, learned once a
 * call asks (same_socket.ts), and a listen is granted at once: the same URI would be granted
 * before and refused after. It is one more name per resource, as another resource is, and held
 * to the same bounds; what multiplied a resource's names without end (empty pairs, escapes)
 * is gone.
 */
export function canonicalUri(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  const keys = [...url.searchParams.keys()];
  if (keys.some((k) => !QUERY_KEYS.includes(k)) || new Set(keys).size < keys.length) return null;
  const query = QUERY_KEYS.flatMap((key) => {
    const value = url.searchParams.get(key);
    return value === null ? [] : [`${key}=${encodeURIComponent(value)}`];
  });
  return `${url.protocol}//${url.host}${url.pathname}${query.length ? `?${query.join("&")}` : ""}`;
}

/**
 * Why `uri` is not a resource's own spelling ({@link canonicalUri}), in one sentence; null when
 * it is, or names nothing. `TMUX://pane/0`, `tmux://pane/./0`, `tmux://pane/a/../0`, an empty
 * `?`, `&` or `#`, a value escaped otherwise (`?socket=%6Dy`, `?socket=a+b`) or `&host=` before
 * `?socket=` each named a resource again, and a listen stream granted each as a URI of its own
 * was told of every change once per spelling. Read, subscribed to and listened to alike.
 */
export function notCanonical(uri: string): string | null {
  const canonical = canonicalUri(uri);
  if (canonical === null || canonical === uri) return null;
  return `${logLine(clip(uri))} is another spelling of ${logLine(clip(canonical))}: a ` +
    "resource is named only as resources/list and resources/templates/list give it (lower " +
    "case; no ./ or ../; no empty ?, & or #; ?socket= then &host=, each encoded as " +
    "encodeURIComponent encodes it).";
}

/**
 * Whether `uri` is the resource `spec` declares (its fixed URI, or one its template fits): how
 * a subscription finds the resource it names, and so the watch it needs. Matched as a read
 * matches it (the SDK reads `new URL(uri).href`: `TMUX://pane/0` is `tmux://pane/0`), so that a
 * read and a subscription refuse the same URIs, another spelling of a resource's URI as such
 * ({@link notCanonical}) rather than as naming nothing; a URI too long for any resource matches
 * none.
 */
export function matches(spec: ResourceSpec, uri: string): boolean {
  if (uriTooLong(uri) !== null) return false;
  let href: string;
  try {
    href = new URL(uri).href;
  } catch {
    return false; // a read refuses it too
  }
  return isTemplate(spec) ? new UriTemplate(spec.uri).match(href) !== null : spec.uri === href;
}

/**
 * The text at `uri`, or a protocol error a person can read (the reason and what to do next,
 * never a stack trace): a missing pane is the client's mistake, answered as invalid params.
 */
async function readOrRefuse(
  spec: ResourceSpec,
  uri: string,
  variables: Readonly<Record<string, string>>,
  ctx: TmuxContext,
): Promise<string> {
  try {
    // A ?socket= that may name this server's own socket by its path: told apart first.
    const named = addressNamedBy(uri, ctx);
    if (named !== ctx.address && named.host === undefined) {
      await learnSocket(ctx.runner, ctx.config, named.socketName, ctx.signal);
    }
    return await spec.read(uri, variables, ctx);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    // The URI comes back as the client sent it, when it is of a size a URI has.
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      failureText(error, addressNamedBy(uri, ctx)),
      uri.length <= MAX_ECHO_CHARS ? { uri } : undefined,
    );
  }
}

/**
 * The tmux server a resource URI names, for messages: its `?socket=` and `&host=` (as
 * TmuxContext takes them: on a host without a socket, that host's default server), else the
 * serving context's own.
 */
function addressNamedBy(uri: string, ctx: TmuxContext): TmuxContext["address"] {
  let query: URLSearchParams;
  try {
    query = new URL(uri).searchParams;
  } catch {
    return ctx.address;
  }
  const socketName = query.get("socket") || undefined;
  const host = query.get("host") ?? undefined;
  if (host !== undefined) return { host, ...(socketName && { socketName }) };
  return socketName ? { socketName } : ctx.address;
}

/**
 * One resource on one SDK server: the SDK lists, completes and reads it from here, so each
 * connection offers the same resources. `listed` is called when a client lists the resources
 * a template stands for: it may then be told when that list changes.
 */
export function register(
  server: McpServer,
  spec: ResourceSpec,
  contextFor: (signal: AbortSignal) => TmuxContext,
  listed: () => void,
): void {
  const metadata = { title: spec.title, description: spec.description, mimeType: spec.mimeType };
  const contents = (uri: string, text: string) => ({
    contents: [{ uri, mimeType: spec.mimeType, text }],
  });
  if (!isTemplate(spec)) {
    server.registerResource(spec.name, spec.uri, metadata, async (uri, ctx) => {
      const text = await readOrRefuse(spec, uri.href, {}, contextFor(ctx.mcpReq.signal));
      return contents(uri.href, text);
    });
    return;
  }
  const list = spec.list;
  const complete = spec.complete;
  const template = new ResourceTemplate(spec.uri, {
    list: list
      ? async (ctx) => {
        listed();
        const tmux = contextFor(ctx.mcpReq.signal);
        const entries = await list(tmux);
        // The SDK lists each with the template's title, description and MIME type: counted,
        // with room left for the fixed resources listed beside them.
        const { kept } = fitEntries(
          entries.map((r) => ({ ...r, ...metadata })),
          tmux.config.maxResultBytes - LISTED_BESIDE_BYTES,
        );
        return { resources: entries.slice(0, kept.length).map((r) => ({ ...r })) };
      }
      : undefined,
    complete: complete ? completers(complete, contextFor) : undefined,
  });
  server.registerResource(spec.name, template, metadata, async (uri, variables, ctx) => {
    const flat = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]),
    );
    const text = await readOrRefuse(spec, uri.href, flat, contextFor(ctx.mcpReq.signal));
    return contents(uri.href, text);
  });
}

/**
 * A template's completers by variable name, in an object without a prototype: the SDK looks
 * the client's argument name up in it (`complete[name]`), and a name such as `constructor` or
 * `toString` found Object's own function there and answered an internal error. Unknown names
 * find nothing and are completed with nothing.
 */
function completers(
  complete: NonNullable<ResourceSpec["complete"]>,
  contextFor: (signal: AbortSignal) => TmuxContext,
): Record<string, (typed: string) => Promise<string[]>> {
  const out: Record<string, (typed: string) => Promise<string[]>> = Object.create(null);
  for (const [variable, values] of Object.entries(complete)) {
    // The SDK gives a completer no request signal: bounded by the budget prompt completions
    // have, and nothing offered past it (a stopped tmux held it for tmux's own 10 s, then
    // answered an internal error).
    out[variable] = (typed: string) =>
      withinBudget((signal) => values(typed, contextFor(signal))).then(boundCompletions);
  }
  return out;
}

/** How long a completion may take reading tmux (a prompt's, a template's). */
export const COMPLETION_BUDGET_MS = 5_000;

/**
 * What `look` finds within {@link COMPLETION_BUDGET_MS}, or nothing: a completion offers what it
 * can while the client types, and no tmux server, or one that does not answer in time (a
 * control connection still opening does not heed the signal), offers nothing. `look`'s signal
 * aborts at the budget, so that its tmux reads stop too.
 */
export async function withinBudget(
  look: (signal: AbortSignal) => Promise<readonly string[]> | readonly string[],
): Promise<readonly string[]> {
  const budget = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const over = new Promise<readonly string[]>((resolve) => {
    timer = setTimeout(() => {
      budget.abort();
      resolve([]);
    }, COMPLETION_BUDGET_MS);
  });
  try {
    const found = Promise.resolve().then(() => look(budget.signal)).catch(() => []);
    return await Promise.race([found, over]);
  } finally {
    clearTimeout(timer);
  }
}
