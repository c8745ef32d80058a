/**
 * What a model reads of a listing: the text of list_panes, list_windows and search_panes says
 * once what rows share (a window's id, name and placements over its panes; flags at their usual
 * value), writes placements as `name($id):index`, and still carries every fact of the
 * structured content (each call below is read back by the tests' reader, see helpers/mcp.ts).
 */

import assert from "node:assert/strict";
import { jsonStringBytes } from "../src/mcp/bounds.ts";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

const wire = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

Deno.test("list text: a window's panes share one line of its id, name and placements; placements and flags read lean", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({
      prefix: "a-project-folder-with-a-long-name-like-the-ones-people-work-in-",
    });
    try {
      // Four windows of three panes in two sessions, one of them named with a space; the last
      // window linked into both.
      await t.tmux("new-session", "-d", "-s", "my project", "-n", "p0", "-c", dir, "sh");
      // Each window named (automatic-rename goes off): windows named alike by their command
      // ("sh") would make a run across windows that the text may group by instead.
      await t.tmux("rename-window", "-t", t.ids.windowId, "first");
      const windows = [t.ids.windowId];
      for (const [k, target] of ["=main:", "=my project:", "=my project:"].entries()) {
        windows.push(
          (await t.tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{window_id}",
            "-n",
            `w${k}`,
            "-t",
            target,
            "-c",
            dir,
            // A command of its own: a window whose panes all run sh, in one folder, would share
            // all but their window with the next, and the text may group the run by those.
            "bash --norc --noprofile",
          )).trim(),
        );
      }
      for (const w of windows) {
        for (let k = 0; k < 2; k++) await t.tmux("split-window", "-d", "-t", w, "-c", dir, "sh");
      }
      await t.tmux("link-window", "-d", "-s", windows[3], "-t", "=main:");
      for (const p of (await t.tmux("list-panes", "-a", "-F", "#{pane_id}")).trim().split("\n")) {
        await t.tmux("select-pane", "-t", p, "-T", `someone@a-build-host: ${dir}`);
      }

      const panes = await c.call("list_panes", {});
      const text = (panes.content as { text: string }[])[0].text;
      const data = panes.structuredContent as { panes: unknown[] };
      assert.equal(data.panes.length, 13, '12 panes and the first of "my project"');
      assert.match(text, /^\* placements: sessionName\(\$sessionId\):index, comma-separated$/m);
      assert.doesNotMatch(text, /placements=\[\{/, "no placement as JSON");
      assert.match(text, /^\* unless an entry says otherwise: active=false$/m);
      assert.doesNotMatch(text, /^- .*=false\b/m, "no row says a flag is as usual");
      for (const w of windows) {
        // Anywhere on its line, the last field too: the + line starts with the field grouped by,
        // and another field that makes the same runs can be chosen, leaving the id at the end.
        const lines = text.split("\n").filter((l) => new RegExp(`windowId=${w}(?: |$)`).test(l));
        assert.equal(lines.length, 1, `${w} once: ${lines.join("\n")}`);
        assert.match(lines[0], /^\+ /);
      }
      assert.match(
        text,
        /^\+ windowId=@\d+ placements=(main\(\$0\):\d,"my project"\(\$1\):\d|"my project"\(\$1\):\d,main\(\$0\):\d) /m,
        "a linked window: both placements, the name with a space quoted",
      );
      assert.ok(
        jsonStringBytes(text) + 2 <= wire(panes.structuredContent) / 2,
        `text ${jsonStringBytes(text) + 2} bytes, structured ${wire(panes.structuredContent)}`,
      );

      const listed = await c.call("list_windows", {});
      const windowText = (listed.content as { text: string }[])[0].text;
      assert.match(
        windowText,
        /^\* placements: sessionName\(\$sessionId\):index, then \* if active, comma-separated$/m,
      );
      assert.match(windowText, /^- id=@\d+ .*placements=main\(\$0\):0\*( |$)/m);
      assert.doesNotMatch(windowText, /placements=\[\{/);

      // Matches in one pane: its placements once, not on each match.
      const p = t.ids.paneId;
      await t.tmux("send-keys", "-t", p, "seq 100 140", "Enter");
      // Its last row on its own (the typed line, echoed at once, names 140 too).
      await waitFor(
        async () => /^140$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
        "seq's last row",
      );
      const found = await c.call("search_panes", {
        pattern: "^1[0-3]",
        regex: true,
        maxMatchesPerPane: 50,
        scrollbackLines: 100,
      });
      const foundText = (found.content as { text: string }[])[0].text;
      assert.ok((found.structuredContent as { matches: unknown[] }).matches.length >= 30);
      assert.equal(foundText.match(/placements=/g)?.length, 1, foundText);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
