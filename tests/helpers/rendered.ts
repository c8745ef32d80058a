/**
 * Reads a result's text block back into data, by the rendering's own rules (src/mcp/render.ts,
 * render_list.ts for lists): a test that gets the structured content back exactly from the text knows the text carried
 * every fact, and that nothing a value held posed as structure.
 *
 * @module
 */

import assert from "node:assert/strict";

/**
 * Reads a rendered reply back into data, by the format's own rules: if every value comes back
 * exactly, the text carried every fact and nothing a value held could pose as structure.
 */
export function parseRendered(text: string): { summary: string; data: Record<string, unknown> } {
  const lines = text.split("\n");
  const summary = lines.shift()!;
  let i = 0;
  const value = (raw: string): unknown => {
    if (raw.startsWith('"') || raw.startsWith("[") || raw.startsWith("{")) return JSON.parse(raw);
    if (/^(?:true|false|null|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/i.test(raw)) return JSON.parse(raw);
    return raw;
  };
  const keyOf = (raw: string): string => raw.startsWith('"') ? JSON.parse(raw) : raw;
  const block = (): string => {
    const fence = lines[i++];
    assert.match(fence, /^`{3,}$/);
    const body: string[] = [];
    while (lines[i] !== fence) body.push(lines[i++]);
    i++;
    // 2k+1 backslashes before xNN: k backslashes and the character NN; 2k: k and the text.
    return body.join("\n").replace(
      /(\\+)x([0-9a-f]{2})/g,
      (_, run: string, h: string) =>
        "\\".repeat(run.length >> 1) +
        (run.length % 2 ? String.fromCharCode(parseInt(h, 16)) : `x${h}`),
    );
  };
  /**
   * Placements as a list's legend says they read: `name($N):index`, `*` after a window's
   * current one, joined by commas; a name bare or a JSON string. Returns them and what follows.
   */
  const placements = (raw: string, active: boolean): [unknown[], string] => {
    const out: Record<string, unknown>[] = [];
    let rest = raw;
    for (;;) {
      const m = rest.match(/^("(?:[^"\\]|\\.)*"|[^\s"(]+)\((\$\d+)\):(\d+)(\*?)/);
      if (!m) throw new Error(`unreadable placements ${JSON.stringify(raw)}`);
      const name = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
      const p: Record<string, unknown> = {
        index: Number(m[3]),
        sessionId: m[2],
        sessionName: name,
      };
      if (active) p.active = m[4] === "*";
      else assert.equal(m[4], "", "a pane's placement has no active mark");
      out.push(p);
      rest = rest.slice(m[0].length);
      if (!rest.startsWith(",")) return [out, rest];
      rest = rest.slice(1);
    }
  };
  /** The fields of an entry line (`- ` or `+ ` and pairs); `placed` names placement fields. */
  const entry = (line: string, placed = new Map<string, boolean>()): unknown => {
    const body = line.slice(2);
    if (!/^(?:[A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*")=/.test(body)) return value(body);
    const out: Record<string, unknown> = {};
    let rest = body;
    while (rest !== "") {
      const quoted = rest.match(/^"(?:[^"\\]|\\.)*"=/);
      const eq = quoted ? quoted[0].length - 1 : rest.indexOf("=");
      const key = keyOf(rest.slice(0, eq));
      rest = rest.slice(eq + 1);
      if (placed.has(key) && !rest.startsWith("[")) {
        [out[key], rest] = placements(rest, placed.get(key)!);
        assert.ok(rest === "" || rest.startsWith(" "), `placements end at a space: ${body}`);
        rest = rest.replace(/^ /, "");
        continue;
      }
      let raw: string;
      if (rest.startsWith('"') || rest.startsWith("[") || rest.startsWith("{")) {
        // The longest prefix that parses as JSON and is followed by a space or the end.
        let end = rest.length;
        for (; end > 0; end--) {
          if (end < rest.length && rest[end] !== " ") continue;
          try {
            JSON.parse(rest.slice(0, end));
            break;
          } catch { /* shorter */ }
        }
        raw = rest.slice(0, end);
      } else {
        const space = rest.indexOf(" ");
        raw = space === -1 ? rest : rest.slice(0, space);
      }
      out[key] = value(raw);
      rest = rest.slice(raw.length).replace(/^ /, "");
    }
    return out;
  };
  const KEY = String.raw`(?:[A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*")`;
  // `* placements: sessionName($sessionId):index, comma-separated`, for the fields it names; a
  // window's placements also mark the current one.
  const active = String.raw`(, then \* if active)?`;
  const legend = String.raw`sessionName\(\$sessionId\):index${active}, comma-separated$`;
  const PLACEMENT_LEGEND = new RegExp(String.raw`^\* (${KEY}(?:, ${KEY})*): ${legend}`);
  /**
   * The lines before a list's entries, which say what the entries share: the fields of every
   * entry, the flags' usual values, the placement fields, whether `+ ` lines group entries.
   */
  const listHead = (indent: string) => {
    const raw: { every?: string; unless?: string } = {};
    const placed = new Map<string, boolean>();
    let groups = false;
    while (lines[i]?.startsWith(`${indent}* `)) {
      const line = lines[i++].slice(indent.length);
      let m: RegExpMatchArray | null;
      if (line.startsWith("* every entry: ")) raw.every = line.slice("* every entry: ".length);
      else if (line.startsWith("* unless an entry says otherwise: ")) {
        raw.unless = line.slice("* unless an entry says otherwise: ".length);
      } else if (line === "* each + line: fields of every entry under it, up to the next + line") {
        groups = true;
      } else if ((m = line.match(PLACEMENT_LEGEND))) {
        for (const k of m[1].match(new RegExp(KEY, "g"))!) placed.set(keyOf(k), m[2] !== undefined);
      } else throw new Error(`unreadable list line ${JSON.stringify(line)}`);
    }
    const fields = (text?: string) =>
      text === undefined ? {} : entry(`- ${text}`, placed) as Record<string, unknown>;
    const unless = fields(raw.unless);
    for (const v of Object.values(unless)) assert.equal(typeof v, "boolean", "flags only");
    return { shared: fields(raw.every), unless, placed, groups };
  };
  const object = (indent: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    while (i < lines.length && lines[i].startsWith(indent) && !lines[i].startsWith(`${indent} `)) {
      const line = lines[i].slice(indent.length);
      let m: RegExpMatchArray | null;
      if ((m = line.match(/^([A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*") \((\d+)\):$/))) {
        i++;
        const list: unknown[] = [];
        const { shared, unless, placed, groups } = listHead(indent);
        // Fields of the entries under a `+ ` line, up to the next one.
        let group: Record<string, unknown> = {};
        for (let n = 0; n < Number(m[2]); n++) {
          if (groups && lines[i]?.startsWith(`${indent}+ `)) {
            group = entry(lines[i++].slice(indent.length), placed) as Record<string, unknown>;
          }
          assert.ok(lines[i]?.startsWith(`${indent}- `), `an entry: ${JSON.stringify(lines[i])}`);
          const own = entry(lines[i++].slice(indent.length), placed);
          const e = typeof own === "object" && own !== null && !Array.isArray(own)
            ? { ...shared, ...unless, ...group, ...own as Record<string, unknown> }
            : own as Record<string, unknown>;
          while (i < lines.length && lines[i].startsWith(`${indent}  `) && /:$/.test(lines[i])) {
            const k = keyOf(lines[i++].trim().slice(0, -1));
            e[k] = block();
          }
          list.push(e);
        }
        out[keyOf(m[1])] = list;
      } else if ((m = line.match(/^([A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*"):$/))) {
        i++;
        if (lines[i]?.startsWith("```")) out[keyOf(m[1])] = block();
        else out[keyOf(m[1])] = object(`${indent}  `);
      } else if ((m = line.match(/^([A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*"): (.*)$/))) {
        i++;
        out[keyOf(m[1])] = value(m[2]);
      } else {
        throw new Error(`unreadable line ${JSON.stringify(lines[i])}`);
      }
    }
    return out;
  };
  return { summary, data: object("") };
}
