/**
 * The attributes text printed by `capture-pane -e` leaves set, as one sequence that sets them
 * from default: what a line cut out of such text (a reply keeping the last lines) must start
 * with to be drawn as it is. tmux writes each capture's codes as changes from the cell before,
 * so a line after the first carries no code for a colour set above it.
 *
 * What `-e` prints (tmux 3.3a grid_string_cells_code): SGR sequences (`ESC [ … m`, parameters
 * split by `;`, an underline style or colour as `4:3` / `58:2::r:g:b`), and SO / SI around text
 * in the line-drawing set.
 *
 * @module
 */

/** Longest {@link drawnState} can be: every attribute, three colours as RGB, the shift. */
export const DRAWN_STATE_BYTES = 128;

// deno-lint-ignore no-control-regex
const CODES = /\x1b\[([0-9;:]*)m|[\x0e\x0f]/g;

/**
 * The attributes each off code takes, by the keys {@link drawnState} keeps them under: a
 * parameter as written, but an underline style (`4:3`) under `4`. tmux 3.3a writes overline
 * (53) as `5:3`, beside blink's `5`.
 */
const OFF: Record<number, string[]> = {
  22: ["1", "2"],
  23: ["3"],
  24: ["4"],
  25: ["5", "6"],
  27: ["7"],
  28: ["8"],
  29: ["9"],
  55: ["53", "5:3"],
};

/**
 * One sequence that sets from default what `text` (lines as `capture-pane -e` prints them, from
 * default attributes) leaves set at its end; "" when that is the default.
 */
export function drawnState(text: string): string {
  // Attributes by their parameter (an underline style, `4:3`, under `4`), then colours.
  const attrs = new Map<string, string>();
  const colours = new Map<"fg" | "bg" | "ul", string>();
  let shifted = false;
  for (const m of text.matchAll(CODES)) {
    if (m[1] === undefined) {
      shifted = m[0] === "\x0e";
      continue;
    }
    const params = m[1] === "" ? ["0"] : m[1].split(";");
    for (let i = 0; i < params.length; i++) {
      const param = params[i];
      const code = Number(param.split(":")[0] || "0");
      if (code === 38 || code === 48 || code === 58) {
        const key = code === 38 ? "fg" : code === 48 ? "bg" : "ul";
        if (param.includes(":")) {
          colours.set(key, param);
          continue;
        }
        // `38;5;n` or `38;2;r;g;b`: the rest of the colour's parameters follow.
        const n = params[i + 1] === "5" ? 2 : params[i + 1] === "2" ? 4 : 0;
        colours.set(key, params.slice(i, i + 1 + n).join(";"));
        i += n;
      } else if (code === 0) {
        attrs.clear();
        colours.clear();
      } else if (code === 39) colours.delete("fg");
      else if (code === 49) colours.delete("bg");
      else if (code === 59) colours.delete("ul");
      else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) colours.set("fg", param);
      else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) {
        colours.set("bg", param);
      } else if (OFF[code]) { for (const on of OFF[code]) attrs.delete(on); }
      else if (param === "4:0") attrs.delete("4");
      else attrs.set(code === 4 ? "4" : param, param);
    }
  }
  const set = [
    ...attrs.values(),
    ...["fg", "bg", "ul"].flatMap((k) => {
      const v = colours.get(k as "fg" | "bg" | "ul");
      return v === undefined ? [] : [v];
    }),
  ];
  return (set.length > 0 ? `\x1b[${set.join(";")}m` : "") + (shifted ? "\x0e" : "");
}

/**
 * Where a cut at `at` of `line` may fall: `at`, or the end of the escape sequence it would
 * split.
 */
export function escapeBoundary(line: string, at: number): number {
  for (const m of line.matchAll(CODES)) {
    const end = (m.index ?? 0) + m[0].length;
    if ((m.index ?? 0) < at && at < end) return end;
    if ((m.index ?? 0) >= at) break;
  }
  return at;
}
