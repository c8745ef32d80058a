/**
 * The stdio transport: newline-delimited JSON-RPC on stdin/stdout, as MCP's stdio transport
 * specifies, with the answers the protocol asks for that the SDK's own transport does not give:
 * a line that is not JSON gets a parse error (-32700), a request that is not a valid JSON-RPC
 * message gets -32600, a line over {@link MAX_LINE_BYTES} is refused instead of ending the
 * process. Lines are gathered without copying on every chunk, so a large line costs one copy.
 * Standing in for the SDK's transport behind the same interface keeps it one module's change.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** The longest line read; longer ones are answered with an error and skipped. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** MCP over this process's stdin and stdout. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Called when stdin ends. The transport stays open for writing, so answers to calls still
   * running can go out; the owner closes it. Without a handler, end of input closes at once.
   */
  oninputend?: () => void;
  #closed = false;
  #writing: Promise<void> = Promise.resolve();
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  /** Starts reading stdin; resolves at once, reading goes on until end of input. */
  start(): Promise<void> {
    this.#reader = Deno.stdin.readable.getReader();
    this.#read().finally(() => this.oninputend ? this.oninputend() : this.close());
    return Promise.resolve();
  }

  async #read(): Promise<void> {
    const reader = this.#reader!;
    let pieces: Uint8Array[] = [];
    let size = 0;
    let skipping = false;
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        let chunk = value;
        while (chunk.length > 0) {
          const nl = chunk.indexOf(0x0a);
          const part = nl === -1 ? chunk : chunk.subarray(0, nl);
          if (!skipping) {
            if (size + part.length > MAX_LINE_BYTES) {
              this.#refuseLong(pieces[0] ?? part);
              pieces = [];
              size = 0;
              skipping = true;
            } else {
              pieces.push(part);
              size += part.length;
            }
          }
          if (nl === -1) break;
          if (!skipping) this.#line(join(pieces, size));
          pieces = [];
          size = 0;
          skipping = false;
          chunk = chunk.subarray(nl + 1);
        }
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #line(bytes: Uint8Array): void {
    const text = decoder.decode(bytes).trim();
    if (text === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#answer(null, -32700, "Parse error: the line is not JSON.");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = idOf(value);
      if (id !== undefined) {
        this.#answer(id, -32600, "Invalid request: not a JSON-RPC 2.0 message.");
      }
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** Answers a line too long to read with the request's id when its head shows one. */
  #refuseLong(head: Uint8Array): void {
    const start = decoder.decode(head.subarray(0, 4096));
    const match = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(start);
    const id = match ? JSON.parse(match[1]) as string | number : null;
    this.#answer(id, -32600, `Invalid request: a line over ${MAX_LINE_BYTES} bytes is not read.`);
  }

  #answer(id: string | number | null, code: number, message: string): void {
    this.#write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  /** Sends one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  #write(message: unknown): Promise<void> {
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    this.#writing = this.#writing.then(async () => {
      if (this.#closed) return;
      let written = 0;
      while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
    }).catch((error) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
    return this.#writing;
  }

  /** Stops reading and reports the close once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#writing;
    this.#closed = true;
    try {
      await this.#reader?.cancel();
    } catch {
      // stdin already ended
    }
    this.onclose?.();
  }
}

function join(pieces: Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function idOf(value: unknown): string | number | null | undefined {
  if (typeof value !== "object" || value === null || !("id" in value)) return undefined;
  const id = (value as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
