/**
 * The 2026-07-28 `subscriptions/listen` streams of one stdio transport, seen through: such a
 * stream is answered by the SDK's stdio entry itself (never by an SDK server), so the URIs it
 * was granted are read from its acknowledgement on the way out, and it ends with its
 * cancellation, its final answer, or the transport. The subscriptions (resources.ts) watch a
 * resource only while some stream asks for it. A stream holds, and hears of, only what it was
 * granted: its request is cut to the URIs a grant looks at as it comes in, and the filter the
 * SDK keeps is narrowed to the grant as it is acknowledged.
 *
 * @module
 */

import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";
import { BUSY_CODE } from "./stdio.ts";

/** What a 2026-07-28 `subscriptions/listen` stream was granted. */
export interface ListenFilter {
  readonly uris: readonly string[];
  readonly listChanged: boolean;
}

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/**
 * Listen streams open at once on one connection (the SDK's stdio entry is told it): each holds
 * its filter and its part of every change routed, until cancelled.
 */
export const MAX_LISTEN_STREAMS = 1024;

/** The SDK's answer to a listen request past its bound of open streams (an internal error). */
const SDK_LIMIT_MESSAGE = "Subscription limit reached";

/**
 * The SDK's refusal of one listen stream too many, said as what it is: not an internal error
 * (-32603) but a bound the client can make room under, by cancelling a stream it holds.
 */
function limitAnswer(message: JSONRPCMessage): JSONRPCMessage {
  const m = message as { id?: unknown; error?: { code?: unknown; message?: unknown } };
  if (m.error?.code !== -32603 || m.error.message !== SDK_LIMIT_MESSAGE) return message;
  return {
    jsonrpc: "2.0",
    id: m.id,
    error: {
      code: BUSY_CODE,
      message: `Too many listen streams are open on this connection (${MAX_LISTEN_STREAMS}); ` +
        "cancel one (notifications/cancelled) or listen to several URIs in one stream.",
    },
  } as JSONRPCMessage;
}

/** What {@link observeListenStreams} asks of the subscriptions. */
export interface ListenHooks {
  /** The streams changed (one came or went): what is watched follows. */
  readonly changed: () => void;
  /**
   * Of the URIs a stream asked for, those it is granted (a URI that names nothing is not): of
   * the first {@link maxAsked} different ones at most.
   */
  readonly grant: (asked: readonly string[]) => string[];
  /** How many different URIs of a stream's request {@link grant} looks at, at most. */
  readonly maxAsked: number;
  /** Settles once the watches of `uris` see changes (or waited long enough). */
  readonly readyFor: (uris: readonly string[]) => Promise<void>;
  /** The transport closed: its streams are gone (before {@link changed} is called). */
  readonly closed: () => void;
}

/**
 * `transport` seen through: each listen stream it serves is kept in `streams` (by subscription
 * id) from its acknowledgement to its end, and its acknowledgement is sent once its URIs are
 * watched, so that what changes after it is told. That is how resources are watched only while
 * some stream asks for them.
 */
export function observeListenStreams(
  transport: Transport,
  streams: Map<string | number, ListenFilter>,
  hooks: ListenHooks,
): Transport {
  // The stdio entry routes changes to a stream from its request on; what it routes before the
  // stream's acknowledgement is sent waits for it (the acknowledgement waits for the watch).
  const acknowledging = new Map<string | number, Promise<void>>();
  // Listen requests read and not acknowledged (or refused) yet, by id: whether each was
  // cancelled meanwhile, in arrival order. A cancellation that comes before the
  // acknowledgement (both in one read) finds no stream to end; the stream is then never
  // registered, so nothing is watched for it.
  const unacknowledged = new Map<string | number, boolean[]>();
  const changed = hooks.changed;
  /** The stream `id` ended; `cancelled`: by the client, perhaps before its acknowledgement. */
  const ended = (id: unknown, cancelled: boolean) => {
    if (typeof id !== "string" && typeof id !== "number") return;
    if (streams.delete(id)) changed();
    else if (unacknowledged.has(id)) {
      const waiting = unacknowledged.get(id)!;
      if (cancelled) waiting[waiting.length - 1] = true;
      // Answered without an acknowledgement: refused.
      else answered(id);
    }
  };
  /** Whether the listen request `id` acknowledged or answered now was cancelled first. */
  const answered = (id: string | number): boolean => {
    const waiting = unacknowledged.get(id);
    const cancelled = waiting?.shift() ?? false;
    if (waiting?.length === 0) unacknowledged.delete(id);
    return cancelled;
  };
  const afterAck = (id: unknown, message: JSONRPCMessage, options?: TransportSendOptions) => {
    const ack = (typeof id === "string" || typeof id === "number")
      ? acknowledging.get(id)
      : undefined;
    if (ack === undefined) return transport.send(message, options);
    const send = () => transport.send(message, options);
    return ack.then(send, send);
  };
  /** Whether `uri` was not granted to the open stream `id` (it is told only what it was). */
  const notGranted = (id: unknown, uri: unknown): boolean => {
    if (typeof id !== "string" && typeof id !== "number") return false;
    const filter = streams.get(id);
    return filter !== undefined && !filter.uris.includes(uri as string);
  };
  const observed: Transport = {
    start: () => transport.start(),
    close: () => transport.close(),
    send: (message: JSONRPCMessage, options?: TransportSendOptions) => {
      const m = message as {
        id?: unknown;
        method?: string;
        params?: Record<string, unknown>;
      };
      if (m.method === "notifications/subscriptions/acknowledged") {
        const id = (m.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID];
        const granted = m.params?.notifications as
          | { resourceSubscriptions?: unknown; resourcesListChanged?: unknown }
          | undefined;
        const asked = Array.isArray(granted?.resourceSubscriptions)
          ? granted.resourceSubscriptions.filter((u): u is string => typeof u === "string")
          : [];
        if ((typeof id === "string" || typeof id === "number") && answered(id)) {
          // Cancelled before its acknowledgement: the SDK has dropped it; nothing to watch.
          return transport.send(message, options);
        }
        if ((typeof id === "string" || typeof id === "number") && granted) {
          // A URI that names no resource (tmux://pane/abc) is left out of what is granted: the
          // stream stands for the others, and the acknowledgement says which.
          const uris = hooks.grant(asked);
          if (Array.isArray(granted.resourceSubscriptions)) {
            // The acknowledged filter is the one the SDK's stdio entry keeps for the stream
            // (@modelcontextprotocol/server 2.4.0's StdioListenRouter sends the object it
            // stores): narrowed to the grant, it routes the stream only what it was granted,
            // and holds no more. (A stream told it had nothing was sent the updates of a URI
            // it had asked for once another stream was granted it; and every stream held all it
            // asked for.) Updates are checked against the grant on their way out all the same.
            granted.resourceSubscriptions = uris;
          }
          const ack = uris.length === asked.length ? message : {
            ...message,
            params: { ...m.params, notifications: { ...granted, resourceSubscriptions: uris } },
          } as JSONRPCMessage;
          streams.set(id, { uris, listChanged: granted.resourcesListChanged === true });
          changed();
          // Acknowledged once watched: what changes after the acknowledgement is told.
          const sent = hooks.readyFor(uris).then(() => transport.send(ack, options));
          acknowledging.set(id, sent);
          const done = () => {
            if (acknowledging.get(id) === sent) acknowledging.delete(id);
          };
          sent.then(done, done);
          return sent;
        }
      } else if (m.method === undefined && m.id !== undefined) {
        // A stream's last answer (or an error) comes after its acknowledgement too.
        const refused = (typeof m.id === "string" || typeof m.id === "number") &&
          unacknowledged.has(m.id);
        ended(m.id, false);
        return afterAck(m.id, refused ? limitAnswer(message) : message, options);
      }
      if (m.method !== undefined) {
        const meta = m.params?._meta as Record<string, unknown> | undefined;
        const stream = meta?.[SUBSCRIPTION_ID];
        if (m.method === "notifications/resources/updated" && notGranted(stream, m.params?.uri)) {
          // Routed by a filter wider than the grant: not this stream's to hear.
          return Promise.resolve();
        }
        return afterAck(stream, message, options);
      }
      return transport.send(message, options);
    },
    setProtocolVersion: (version: string) => transport.setProtocolVersion?.(version),
  };
  transport.onmessage = (message, extra) => {
    const m = message as { id?: unknown; method?: string; params?: { requestId?: unknown } };
    if (m.method === "notifications/cancelled") ended(m.params?.requestId, true);
    else if (
      m.method === "subscriptions/listen" &&
      (typeof m.id === "string" || typeof m.id === "number")
    ) {
      const waiting = unacknowledged.get(m.id);
      if (waiting) waiting.push(false);
      else unacknowledged.set(m.id, [false]);
      // The SDK hands the message on as it is: a listen request cut is handed on cut.
      observed.onmessage?.(looked(message, hooks.maxAsked) as typeof message, extra);
      return;
    }
    observed.onmessage?.(message, extra);
  };
  transport.onerror = (error) => observed.onerror?.(error);
  transport.onclose = () => {
    hooks.closed();
    changed();
    observed.onclose?.();
  };
  return observed;
}

/**
 * A listen request with its `resourceSubscriptions` cut to what {@link ListenHooks.grant} looks
 * at: the first `max` different URIs. The rest could never be granted, and the SDK's stdio entry
 * keeps what a stream asked for until its acknowledgement (and queues the request meanwhile):
 * half a million names in one request held some 20 MB for as long. A list that is not all
 * strings is left as it is, for the SDK to refuse.
 */
function looked(message: JSONRPCMessage, max: number): JSONRPCMessage {
  const params = (message as { params?: Record<string, unknown> }).params;
  const notifications = params?.notifications as Record<string, unknown> | undefined;
  const asked = notifications?.resourceSubscriptions;
  if (!Array.isArray(asked) || asked.length <= max) return message;
  const kept = new Set<string>();
  for (const uri of asked) {
    if (typeof uri !== "string") return message;
    if (kept.size < max) kept.add(uri);
  }
  return {
    ...message,
    params: { ...params, notifications: { ...notifications, resourceSubscriptions: [...kept] } },
  } as JSONRPCMessage;
}
