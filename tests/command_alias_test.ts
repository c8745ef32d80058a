/**
 * A person's tmux `command-alias` entry named like a command this server sends (tmux applies
 * it to every command it parses, control-mode lines and `if-shell` branches included): the
 * call is refused before anything is sent, naming the entry; any other alias changes nothing.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";
import { readShadows, shadowIn } from "../src/tmux/command_aliases.ts";

const DEFAULTS = "command-alias[0] split-pane=split-window\n" +
  'command-alias[2] "server-info=show-messages -JT"\n';

Deno.test("readShadows keeps the entries named like a tmux command, and trusts no read its two spellings disagree on", () => {
  const listing = DEFAULTS + 'command-alias[100] "send-keys=send-keys -X cancel"\n' +
    "command-alias[101] ls=list-sessions\ncommand-alias[102] zz=kill-server\n";
  assert.deepEqual(readShadows(listing + listing), [
    { index: "100", name: "send-keys", entry: '"send-keys=send-keys -X cancel"' },
  ]);
  assert.deepEqual(readShadows(DEFAULTS + DEFAULTS), []);
  assert.ok("unsure" in readShadows(DEFAULTS + "status on\n"));
  assert.ok("unsure" in readShadows("status on\n" + "status on\n"));
});

Deno.test("shadowIn finds a command name where tmux reads one, at any depth of quoting", () => {
  const shadows = [{ index: "1", name: "send-keys", entry: "send-keys=x" }];
  const found = (...args: string[]) => shadowIn(args, shadows) !== null;
  assert.ok(found("send-keys", "-t", "%1", "x"));
  assert.ok(found("if-shell", "-F", "1", "'send-keys' '-t' '%1'"));
  assert.ok(found("if-shell", "1", "'if-shell' '1' ''\\''send-keys'\\'' x'"));
  assert.ok(found("if-shell", "1", "{ send-keys -t %1 x }"));
  assert.ok(found("display-message", "-p", "x ; send-keys"));
  assert.ok(!found("send-keys-x"));
  assert.ok(!found("display-message", "-p", "echo send-keys"));
  assert.ok(shadowIn(["list-panes"], shadows, ["send-keys"]) !== null, "what goes with the line");
  assert.equal(shadowIn(["send-keys"], []), null);
});

Deno.test("an alias named like a command the call sends refuses it, nothing sent; another alias changes nothing", async () => {
  await withTmux(async (t, c) => {
    const pane = t.ids.paneId;
    // Ordinary aliases: a name of their own, tmux's short names, a default.
    await t.tmux("set-option", "-s", "command-alias[10]", "zz=kill-server");
    await t.tmux("set-option", "-s", "command-alias[11]", "send=send-keys -t %0 BAD");
    await t.tmux("set-option", "-s", "command-alias[12]", "display=display-message -d 0");
    await c.ok("send_keys", { paneId: pane, text: "echo ONE", enter: true });
    await c.ok("list_panes", {});

    // Set after the server's first calls, as a person's config sourced again would.
    for (
      const [name, value] of [
        ["send-keys", "send-keys -X cancel"],
        ["if-shell", "if-shell -b"],
        ["display-message", "display-message -c nosuch"],
      ]
    ) {
      await t.tmux("set-option", "-s", "command-alias[100]", `${name}=${value}`);
      const refusal = await c.fail("send_keys", { paneId: pane, text: "echo TWO", enter: true });
      assert.match(refusal, new RegExp(`command-alias\\[100\\] .*stands for ${name}`), refusal);
      assert.match(refusal, /nothing was sent/);
    }
    // A read of the aliases an alias rewrites is no read.
    await t.tmux("set-option", "-s", "command-alias[100]", "show=show-options -v");
    assert.match(await c.fail("list_panes", {}), /command-alias could not be read/);

    await t.tmux("set-option", "-su", "command-alias[100]");
    await c.ok("send_keys", { paneId: pane, text: "echo THREE", enter: true });
    // send_keys returns once tmux has the keys; their echo is drawn a moment later.
    const screen = await waitFor(async () => {
      const now = await t.tmux("capture-pane", "-p", "-t", pane);
      return /THREE/.test(now) && now;
    }, "the echo of THREE in the pane");
    assert.match(screen, /THREE/);
    assert.doesNotMatch(screen, /TWO|BAD/, "nothing was typed while refused");
  });
});
