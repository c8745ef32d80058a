/**
 * Resources and their subscriptions, under both protocol versions, the one place they meet the
 * SDK. A resource is read the same way in both; what differs is how a client hears that it
 * changed. A 2025-11-25 client subscribes to a URI (`resources/subscribe`) and is sent
 * `notifications/resources/updated` for that URI on its connection. A 2026-07-28 client opens
 * a `subscriptions/listen` stream naming the URIs; the SDK's stdio entry answers it and passes
 * on an update only to the streams that asked for that URI. So a change is announced once, to
 * every connected SDK server: each says it to its client the way its protocol does.
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
  ResourceTemplate,
  UriTemplate,
} from "@modelcontextprotocol/server";
import type { TmuxContext } from "./context.ts";

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
}

/** The protocol generation an SDK server speaks (the SDK's word for it). */
export type Era = "legacy" | "modern";

/** One connected SDK server and, under 2025-11-25, the URIs its client subscribed to. */
interface Connection {
  readonly server: McpServer;
  readonly era: Era;
  readonly subscribed: Set<string>;
}

/**
 * The connections to tell when a resource changes. A connection leaves when its SDK server
 * closes, so a server built and dropped by the stdio entry (a `server/discover` probe followed
 * by `initialize`) leaves nothing behind.
 */
export class ResourceSubscriptions {
  readonly #connections = new Set<Connection>();

  /** How many SDK servers are connected and not yet closed. */
  get connections(): number {
    return this.#connections.size;
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
    server.server.registerCapabilities({ resources: { subscribe: true, listChanged: false } });
    for (const spec of resources) register(server, spec, contextFor);
    const connection: Connection = { server, era, subscribed: new Set() };
    if (era === "legacy") {
      // Under 2026-07-28 these methods do not exist (the SDK answers -32601): listen streams
      // replace them.
      const known = (uri: string) => resources.some((spec) => matches(spec, uri));
      server.server.setRequestHandler("resources/subscribe", (request) => {
        if (!known(request.params.uri)) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `No resource ${request.params.uri}: resources/list and resources/templates/list show them.`,
          );
        }
        connection.subscribed.add(request.params.uri);
        return {};
      });
      server.server.setRequestHandler("resources/unsubscribe", (request) => {
        connection.subscribed.delete(request.params.uri);
        return {};
      });
    }
    this.#connections.add(connection);
    const previous = server.server.onclose;
    server.server.onclose = () => {
      this.#connections.delete(connection);
      previous?.();
    };
  }

  /**
   * Announces that the resource at `uri` changed: to each 2025-11-25 client subscribed to it,
   * and to each 2026-07-28 connection, whose stdio entry passes it on to the streams that
   * listen for it (and to no other).
   */
  updated(uri: string): void {
    for (const connection of this.#connections) {
      if (connection.era === "legacy" && !connection.subscribed.has(uri)) continue;
      if (!connection.server.isConnected()) continue;
      connection.server.server.sendResourceUpdated({ uri }).catch(() => {
        // A client that went away cannot be told.
      });
    }
  }
}

function isTemplate(spec: ResourceSpec): boolean {
  return /\{[^}]+\}/.test(spec.uri);
}

function matches(spec: ResourceSpec, uri: string): boolean {
  return isTemplate(spec) ? new UriTemplate(spec.uri).match(uri) !== null : spec.uri === uri;
}

/** One resource on one SDK server. */
function register(
  server: McpServer,
  spec: ResourceSpec,
  contextFor: (signal: AbortSignal) => TmuxContext,
): void {
  const metadata = { title: spec.title, description: spec.description, mimeType: spec.mimeType };
  const contents = (uri: string, text: string) => ({
    contents: [{ uri, mimeType: spec.mimeType, text }],
  });
  if (!isTemplate(spec)) {
    server.registerResource(spec.name, spec.uri, metadata, async (uri, ctx) => {
      const text = await spec.read(uri.href, {}, contextFor(ctx.mcpReq.signal));
      return contents(uri.href, text);
    });
    return;
  }
  const list = spec.list;
  const complete = spec.complete;
  const template = new ResourceTemplate(spec.uri, {
    list: list
      ? async (ctx) => ({
        resources: (await list(contextFor(ctx.mcpReq.signal))).map((r) => ({ ...r })),
      })
      : undefined,
    complete: complete
      ? Object.fromEntries(
        Object.entries(complete).map(([variable, values]) => [
          variable,
          async (
            typed: string,
          ) => [...await values(typed, contextFor(new AbortController().signal))],
        ]),
      )
      : undefined,
  });
  server.registerResource(spec.name, template, metadata, async (uri, variables, ctx) => {
    const flat = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]),
    );
    const text = await spec.read(uri.href, flat, contextFor(ctx.mcpReq.signal));
    return contents(uri.href, text);
  });
}
