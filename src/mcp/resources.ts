/**
 * Resource subscriptions, under both protocol versions: who is told that a resource changed,
 * the watches that run while somebody asks, and how many. A resource is declared, registered
 * and read the same way in both (resource_spec.ts); what differs is how a client hears that it
 * changed. A 2025-11-25 client subscribes to a URI (`resources/subscribe`) and is sent
 * `notifications/resources/updated` for that URI on its connection. A 2026-07-28 client opens
 * a `subscriptions/listen` stream naming the URIs; the SDK's stdio entry answers it and passes
 * on an update only to the streams that asked for that URI. So a change is announced once, to
 * every connected SDK server: each says it to its client the way its protocol does. How a
 * listen stream is seen on its way out: listen_streams.ts; how a burst of changes becomes one
 * announcement: update_coalescing.ts.
 *
 * A server with no resources declares none, and its clients see exactly what they saw before
 * resources existed.
 *
 * @module
 */

import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type Transport,
} from "@modelcontextprotocol/server";
import type { TmuxContext } from "./context.ts";
import { type LogLevel, logLine, stderrLog } from "./call_log.ts";
import { clip, failureText } from "./errors.ts";
import {
  canonicalUri,
  type Feed,
  matches,
  notCanonical,
  register,
  type ResourceSpec,
  uriTooLong,
} from "./resource_spec.ts";
import { type ListenFilter, observeListenStreams } from "./listen_streams.ts";
import { wrapSdkHandler } from "./tool_list.ts";
import { UpdateCoalescer } from "./update_coalescing.ts";

/** Longest a subscription's answer waits for its watch to see changes. */
export const READY_WAIT_MS = 3_000;

/** The protocol generation an SDK server speaks (the SDK's word for it). */
export type Era = "legacy" | "modern";

/** One connected SDK server and, under 2025-11-25, the URIs its client subscribed to. */
interface Connection {
  readonly server: McpServer;
  readonly era: Era;
  readonly subscribed: Set<string>;
  /** Its client listed resources (2025-11-25): it is told when the list changes. */
  listed: boolean;
}

const LIST_KEY = "";

/** Resources watched at once, at most (see ResourceSubscriptions.#refusal). */
export const MAX_WATCHED_URIS = 512;
/**
 * Pairs of a listen stream and a URI granted to it on one connection, at most: each pair is
 * told of each change of its URI, and every stream could otherwise be granted the same
 * {@link MAX_WATCHED_URIS} again (a thousand streams of them kept a core busy). URIs past it
 * are left out of a grant, as those past {@link MAX_WATCHED_URIS} are.
 */
export const MAX_LISTEN_PAIRS = 4_096;
/** tmux servers (socket and host) whose resources are watched at once, at most. */
export const MAX_WATCHED_SERVERS = 16;

/** What is watched at once: URIs, and the servers they are on (see serverOf). */
interface Watching {
  readonly uris: Set<string>;
  readonly servers: Set<string>;
}

/** Which tmux server a resource URI is on: its `socket` and `host` query, as given. */
function serverOf(uri: string): string {
  try {
    const query = new URL(uri).searchParams;
    return `${query.get("host") ?? ""}\n${query.get("socket") ?? ""}`;
  } catch {
    return "";
  }
}

/**
 * The connections to tell when a resource changes. A connection leaves when its SDK server
 * closes, so a server built and dropped by the stdio entry (a `server/discover` probe followed
 * by `initialize`) leaves nothing behind.
 */
export class ResourceSubscriptions {
  readonly #connections = new Set<Connection>();
  /** The listen streams of each observed stdio transport, by subscription id. */
  readonly #streams = new Set<Map<string | number, ListenFilter>>();
  #resources: readonly ResourceSpec[] = [];
  #contextFor: ((signal: AbortSignal) => TmuxContext) | null = null;
  /** Watches running, by URI. */
  readonly #watches = new Map<string, Feed>();
  /**
   * URIs whose watch would not start (it threw: the URI names nothing to watch), kept while
   * somebody still wants them: each change of what is wanted would otherwise try, and warn,
   * again. Forgotten once nobody does, so a later subscription tries afresh. A watch that
   * started and then loses its server is not here: its feed tries again itself (Backoff).
   */
  readonly #unwatchable = new Set<string>();
  /** List watches running, by resource name. */
  readonly #listWatches = new Map<string, () => void>();
  /** Announcements waiting for the rest of their burst, or for their gap. */
  readonly #pending = new UpdateCoalescer();
  #log: (level: LogLevel, message: string) => void = stderrLog();

  /** How many SDK servers are connected and not yet closed. */
  get connections(): number {
    return this.#connections.size;
  }

  /** The URIs watched now (for tests: nobody subscribed, nothing watched). */
  get watched(): string[] {
    return [...this.#watches.keys()];
  }

  /** Whether the lists of resources are being watched (someone may hold a list). */
  get watchingList(): boolean {
    return this.#listWatches.size > 0;
  }

  /** Where {@link log} writes besides clients (default stderr). */
  set stderr(write: (level: LogLevel, message: string) => void) {
    this.#log = write;
  }

  /**
   * What an operator wants to know (a control connection lost, a tmux server gone): one line
   * to stderr, and a `notifications/message` to each 2025-11-25 client at or above the level
   * it set (`logging/setLevel`; `info` until it sets one). A 2026-07-28 connection has no
   * channel for a message outside a request: stderr has it. Never pass typed text or command
   * lines above `debug`.
   */
  log(level: LogLevel, message: string): void {
    this.#log(level, message);
    for (const connection of this.#connections) {
      if (connection.era !== "legacy" || !connection.server.isConnected()) continue;
      connection.server.server.sendLoggingMessage({
        level,
        data: logLine(message),
        logger: "tmux-mcp",
      })
        .catch(() => {
          // A client that went away cannot be told; stderr has it.
        });
    }
  }

  /**
   * The transport a stdio entry serves, seen through: its 2026-07-28 `subscriptions/listen`
   * streams are granted what may be watched, and watched while they last
   * ({@link observeListenStreams}).
   */
  observe(transport: Transport): Transport {
    const streams = new Map<string | number, ListenFilter>();
    this.#streams.add(streams);
    return observeListenStreams(transport, streams, {
      changed: () => this.#reconcile(),
      grant: (asked) => {
        // A stream may ask for any number of URIs (a million in one request held the server
        // half a minute): each is looked at once, at most MAX_WATCHED_URIS of them (no more
        // can be granted), with one context for all. The connection's streams hold at most
        // MAX_LISTEN_PAIRS URIs between them: those past it are left out, as those past
        // MAX_WATCHED_URIS are.
        const uris: string[] = [];
        let room = MAX_LISTEN_PAIRS;
        for (const filter of streams.values()) room -= filter.uris.length;
        const watching = this.#watching();
        const ctx = this.#contextFor?.(new AbortController().signal);
        const seen = new Set<string>();
        for (const uri of asked) {
          if (uris.length >= room) break;
          if (seen.has(uri)) continue;
          if (seen.size >= MAX_WATCHED_URIS) break;
          seen.add(uri);
          if (this.#refusal(uri, watching, ctx) === null) uris.push(uri);
        }
        return uris;
      },
      maxAsked: MAX_WATCHED_URIS,
      readyFor: (uris) => this.#readyFor(uris),
      closed: () => this.#streams.delete(streams),
    });
  }

  /**
   * Declares `resources` on `server` (with `subscribe`; the list of resources is fixed, so no
   * `listChanged`), registers each, answers subscriptions under 2025-11-25 and keeps the server
   * informed of changes until it closes. Call before the server connects.
   */
  attach(
    server: McpServer,
    era: Era,
    resources: readonly ResourceSpec[],
    contextFor: (signal: AbortSignal) => TmuxContext,
  ): void {
    if (resources.length === 0) return;
    this.#resources = resources;
    this.#contextFor = contextFor;
    this.#log = stderrLog(contextFor(new AbortController().signal).config.diagnostics);
    const listChanged = resources.some((spec) => spec.watchList !== undefined);
    server.server.registerCapabilities({ resources: { subscribe: true, listChanged } });
    const connection: Connection = { server, era, subscribed: new Set(), listed: false };
    const listed = () => {
      if (connection.listed || era !== "legacy") return;
      connection.listed = true;
      this.#reconcile();
    };
    for (const spec of resources) register(server, spec, contextFor, listed);
    // A URI too long for any resource is the client's mistake: the SDK's template matching
    // threw on it, answering an internal error.
    wrapSdkHandler(server, "resources/read", (original) => async (request, extra) => {
      const uri = (request as { params?: { uri?: unknown } }).params?.uri;
      if (typeof uri === "string") {
        // A URI one of them would take under its one spelling is refused as a subscription is
        // (see #refusal); one that names nothing is left to the SDK's answer.
        let refusal = uriTooLong(uri);
        if (refusal === null) {
          const canonical = canonicalUri(uri) ?? uri;
          if (resources.some((spec) => matches(spec, canonical))) refusal = notCanonical(uri);
        }
        if (refusal !== null) throw new ProtocolError(ProtocolErrorCode.InvalidParams, refusal);
      }
      return await original(request, extra);
    });
    if (era === "legacy") {
      // Under 2026-07-28 these methods do not exist (the SDK answers -32601): listen streams
      // replace them.
      server.server.setRequestHandler("resources/subscribe", async (request) => {
        const refusal = this.#refusal(request.params.uri, this.#watching());
        if (refusal !== null) throw new ProtocolError(ProtocolErrorCode.InvalidParams, refusal);
        connection.subscribed.add(request.params.uri);
        this.#reconcile();
        // Answered once watched: what changes after the answer is told.
        await this.#readyFor([request.params.uri]);
        return {};
      });
      server.server.setRequestHandler("resources/unsubscribe", (request) => {
        connection.subscribed.delete(request.params.uri);
        this.#reconcile();
        return {};
      });
    }
    this.#connections.add(connection);
    const previous = server.server.onclose;
    server.server.onclose = () => {
      this.#connections.delete(connection);
      this.#reconcile();
      previous?.();
    };
  }

  /**
   * Why `uri` cannot be subscribed to, or null: no resource has it, it names nothing, or it
   * would pass what this process watches at once ({@link MAX_WATCHED_URIS} resources on
   * {@link MAX_WATCHED_SERVERS} tmux servers: a watch of a server that is not there tries again
   * and again, each try a tmux process). `watching` is what is watched with the URIs granted
   * so far; a URI that is not refused is added to it. `ctx`: the context to check it in (one
   * for a whole listen stream's URIs), else one of its own. The cheap tests come first: a URI
   * already watched was checked when it was granted.
   */
  #refusal(uri: string, watching: Watching, ctx?: TmuxContext): string | null {
    const tooLong = uriTooLong(uri);
    if (tooLong !== null) return tooLong;
    const { uris, servers } = watching;
    if (uris.has(uri)) return null;
    if (uris.size >= MAX_WATCHED_URIS) {
      return `This server watches at most ${MAX_WATCHED_URIS} resources at once: unsubscribe ` +
        "from some (or end a listen stream) first.";
    }
    const spec = this.#resources.find((s) => matches(s, uri));
    if (!spec) {
      // On one line, whatever the URI holds (a newline, an escape sequence).
      return `No resource ${logLine(clip(uri))}: resources/list and resources/templates/list ` +
        "show them.";
    }
    // One spelling per resource, as a read takes it (canonicalUri): each alias of a pane was
    // granted as a URI of its own, and told of each change again.
    const spelling = notCanonical(uri);
    if (spelling !== null) return spelling;
    try {
      const on = ctx ?? this.#contextFor?.(new AbortController().signal);
      if (on) spec.check?.(uri, on);
    } catch (error) {
      return failureText(error, {});
    }
    const server = serverOf(uri);
    if (!servers.has(server) && servers.size >= MAX_WATCHED_SERVERS) {
      return `This server watches resources on at most ${MAX_WATCHED_SERVERS} tmux servers at ` +
        "once: unsubscribe from another server's first.";
    }
    uris.add(uri);
    servers.add(server);
    return null;
  }

  /** The URIs watched now and the tmux servers they are on, for {@link #refusal}. */
  #watching(): Watching {
    const uris = this.#wantedUris();
    return { uris, servers: new Set([...uris].map(serverOf)) };
  }

  /** Every URI some connection or stream asked for now. */
  #wantedUris(): Set<string> {
    const wanted = new Set<string>();
    for (const connection of this.#connections) {
      if (connection.era === "legacy") { for (const uri of connection.subscribed) wanted.add(uri); }
    }
    for (const streams of this.#streams) {
      for (const filter of streams.values()) for (const uri of filter.uris) wanted.add(uri);
    }
    return wanted;
  }

  /** Whether some client asked to hear of `uri`, as far as can be known. */
  #wanted(uri: string): boolean {
    for (const connection of this.#connections) {
      if (connection.era === "legacy" && connection.subscribed.has(uri)) return true;
    }
    for (const streams of this.#streams) {
      for (const filter of streams.values()) if (filter.uris.includes(uri)) return true;
    }
    return false;
  }

  /** Starts the watches somebody needs and stops those nobody needs any more. */
  #reconcile(): void {
    const wanted = this.#wantedUris();
    let list = false;
    for (const connection of this.#connections) {
      if (connection.era === "legacy") list ||= connection.listed;
    }
    for (const streams of this.#streams) {
      for (const filter of streams.values()) list ||= filter.listChanged;
    }
    for (const [uri, feed] of [...this.#watches]) {
      if (wanted.has(uri)) continue;
      this.#watches.delete(uri);
      this.#pending.cancel(uri);
      feed.stop();
    }
    for (const uri of this.#unwatchable) if (!wanted.has(uri)) this.#unwatchable.delete(uri);
    const contextFor = this.#contextFor;
    if (!contextFor) return;
    for (const uri of wanted) {
      if (this.#watches.has(uri) || this.#unwatchable.has(uri)) continue;
      const spec = this.#resources.find((s) => s.watch && matches(s, uri));
      if (!spec?.watch) continue;
      // Taken, should watch() call back at once.
      this.#watches.set(uri, { ready: Promise.resolve(), stop: () => {} });
      let feed: Feed;
      try {
        feed = spec.watch(uri, contextFor(new AbortController().signal), () => {
          if (this.#watches.has(uri)) this.updated(uri);
        });
      } catch (error) {
        // Refused before a subscription is taken (#refusal); should one slip through, it is
        // watched by nobody rather than failing every other watch here, and said once.
        this.#watches.delete(uri);
        this.#unwatchable.add(uri);
        this.#log("warning", `cannot watch ${uri}: ${failureText(error, {})}`);
        continue;
      }
      if (this.#watches.has(uri)) this.#watches.set(uri, feed);
      else feed.stop();
    }
    for (const spec of this.#resources) {
      if (!spec.watchList) continue;
      const running = this.#listWatches.get(spec.name);
      if (running && !list) {
        this.#listWatches.delete(spec.name);
        running();
      } else if (!running && list) {
        const stop = spec.watchList(
          contextFor(new AbortController().signal),
          () => this.listChanged(),
        );
        this.#listWatches.set(spec.name, stop);
      }
    }
    if (!list) this.#pending.cancel(LIST_KEY);
  }

  /**
   * Settles when the watches of `uris` see changes, or after {@link READY_WAIT_MS}: a
   * subscription is answered then, so what changes after the answer is told.
   */
  async #readyFor(uris: readonly string[]): Promise<void> {
    const feeds = uris.flatMap((uri) => this.#watches.get(uri)?.ready ?? []);
    if (feeds.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(feeds),
      new Promise((resolve) => timer = setTimeout(resolve, READY_WAIT_MS)),
    ]);
    clearTimeout(timer);
  }

  /**
   * Says that the list of resources changed (panes came or went), to every 2025-11-25 client
   * and every 2026-07-28 stream that asked for it; coalesced like updates.
   */
  listChanged(): void {
    this.#pending.coalesce(LIST_KEY, () => {
      for (const connection of this.#connections) {
        if (!connection.server.isConnected()) continue;
        connection.server.server.sendResourceListChanged().catch(() => {
          // A client that went away cannot be told.
        });
      }
    });
  }

  /**
   * Announces that the resource at `uri` changed: to each 2025-11-25 client subscribed to it,
   * and to each 2026-07-28 connection, whose stdio entry passes it on to the streams that
   * listen for it (and to no other).
   */
  updated(uri: string): void {
    const modern = [...this.#connections].some((c) => c.era === "modern");
    // A modern connection on a transport not observed (see observe) cannot be asked: its
    // entry passes the update only to the streams that listen for it.
    if (!modern && !this.#wanted(uri)) return;
    this.#pending.coalesce(uri, () => this.#announce(uri));
  }

  #announce(uri: string): void {
    for (const connection of this.#connections) {
      if (connection.era === "legacy" && !connection.subscribed.has(uri)) continue;
      if (!connection.server.isConnected()) continue;
      connection.server.server.sendResourceUpdated({ uri }).catch(() => {
        // A client that went away cannot be told.
      });
    }
  }
}
