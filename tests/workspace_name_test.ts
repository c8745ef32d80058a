/**
 * The `workspace` prompt's default session name (and its completion) is one create_session
 * takes as it is, whatever the directory is called: cut between characters, never inside a
 * surrogate pair, and without what create_session refuses (`.`, `:`, `\`, `$` before a letter,
 * `#[`, a name like an id). Its directory completion offers only paths the prompt then takes.
 */

import assert from "node:assert/strict";
import { sessionNameFor } from "../src/tools/prompts.ts";
import { checkName } from "../src/tools/arguments.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

const EMOJI = "\u{1F600}"; // two UTF-16 code units

/** What the prompt's text asks create_session for. */
function createSessionArgs(text: string): Record<string, unknown> {
  const at = text.indexOf("`create_session` {");
  assert.ok(at >= 0, "the text calls create_session");
  const start = text.indexOf("{", at);
  for (let end = text.indexOf("}", start); end >= 0; end = text.indexOf("}", end + 1)) {
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch {
      // not the closing brace yet
    }
  }
  throw new Error("no JSON after create_session");
}

async function completions(
  c: TestClient,
  argument: string,
  value: string,
  args: Record<string, string> = {},
): Promise<string[]> {
  return (await c.client.complete({
    ref: { type: "ref/prompt", name: "workspace" },
    argument: { name: argument, value },
    context: { arguments: args },
  })).completion.values;
}

Deno.test("sessionNameFor gives names create_session's rules take, cut between characters", () => {
  const cases: [string, string][] = [
    ["/tmp/" + "b".repeat(63) + EMOJI, "b".repeat(63)],
    ["/srv/proj$v2", "proj_v2"],
    ["/srv/$2", "_2"],
    ["/srv/$$a", "__a"],
    ["/srv/$(no) $ $1 $", "$(no) $ $1 $"],
    ["/srv/a#[fg=red]", "a_[fg=red]"],
    ["/srv/a##[b", "a#_[b"],
    ["/srv/web.app:1\\x", "web_app_1_x"],
    ["/srv/p\u2028q\u202er\u0085", "p_q_r_"],
    ["/", "work"],
  ];
  for (const [directory, name] of cases) {
    assert.equal(sessionNameFor(directory), name, directory);
    checkName("session name", name);
  }
});

Deno.test("workspace: the default session name, completed or written, is one create_session takes", async () => {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  try {
    for (const directory of ["/tmp/" + "b".repeat(63) + EMOJI, "/tmp/proj$v2", "/tmp/a#[b.c"]) {
      const [completed, ...more] = await completions(c, "name", "", { directory });
      assert.equal(more.length, 0);
      // What completion offers, prompts/get takes.
      await c.client.getPrompt({ name: "workspace", arguments: { directory, name: completed } });
      const got = await c.client.getPrompt({ name: "workspace", arguments: { directory } });
      const text = (got.messages[0].content as { text: string }).text;
      const args = createSessionArgs(text);
      assert.equal(args.name, completed);
      // And create_session takes it as it is.
      const made = await c.ok<{ name: string }>("create_session", {
        name: completed,
        startDirectory: "/tmp",
      });
      assert.equal(made.name, completed);
    }
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("workspace: a name create_session would refuse is refused by the prompt, saying why", async () => {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  try {
    await assert.rejects(
      c.client.getPrompt({ name: "workspace", arguments: { directory: "/tmp", name: "a$b" } }),
      /name: The session name "a\$b" holds '\$' before a letter/,
    );
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("workspace: directory completion offers only paths the prompt takes", async () => {
  const t = await TestTmux.start("main");
  const c = await connect({ socketName: t.socket });
  const root = await Deno.makeTempDir({ prefix: "tmux-mcp-long-" });
  try {
    // Five levels of 250 characters: a path past the 1 024 the prompt's directory takes.
    const long = [root, ..."abcde"].reduce((dir, c) => `${dir}/${c.repeat(250)}`);
    await Deno.mkdir(long, { recursive: true });
    for (const dir of [long, root]) {
      const pane = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}", "-c", dir, "sleep 1000"],
      )).trim();
      // tmux reads a pane's path from its process, which moves there only once it runs.
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_path}")).trim() ===
            dir,
        `${pane} in its folder`,
      );
    }
    const offered = await completions(c, "directory", root);
    assert.deepEqual(offered, [root]);
  } finally {
    await c.close();
    await t.kill();
    await Deno.remove(root, { recursive: true });
  }
});
