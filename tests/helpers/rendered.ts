/**
 * Reads a result's text block back into data, by the rendering's own rules (src/mcp/render.ts):
 * a test that gets the structured content back exactly from the text knows the text carried
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
  const entry = (line: string): unknown => {
    const body = line.slice(2);
    if (!/^(?:[A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*")=/.test(body)) return value(body);
    const out: Record<string, unknown> = {};
    let rest = body;
    while (rest !== "") {
      const quoted = rest.match(/^"(?:[^"\\]|\\.)*"=/);
      const eq = quoted ? quoted[0].length - 1 : rest.indexOf("=");
      const key = keyOf(rest.slice(0, eq));
      rest = rest.slice(eq + 1);
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
  const object = (indent: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    while (i < lines.length && lines[i].startsWith(indent) && !lines[i].startsWith(`${indent} `)) {
      const line = lines[i].slice(indent.length);
      let m: RegExpMatchArray | null;
      if ((m = line.match(/^([A-Za-z_][\w.-]*|"(?:[^"\\]|\\.)*") \((\d+)\):$/))) {
        i++;
        const list: unknown[] = [];
        // Fields every entry shares, written once before them.
        let shared: Record<string, unknown> = {};
        const every = `${indent}* every entry: `;
        if (lines[i]?.startsWith(every)) {
          shared = entry(`- ${lines[i++].slice(every.length)}`) as Record<string, unknown>;
        }
        for (let n = 0; n < Number(m[2]); n++) {
          const own = entry(lines[i++].slice(indent.length));
          const e = Object.keys(shared).length
            ? { ...shared, ...own as Record<string, unknown> }
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
