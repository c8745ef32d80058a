import assert from "node:assert/strict";
import { describeServer, tmuxSocketPath } from "./which_server.ts";

Deno.test("describeServer: a configured socket wins; else TMUX's server; else tmux's default", () => {
  const tmux = "/tmp/tmux-1000/work,4242,0";
  assert.equal(describeServer({ socketPath: "/s/p" }, tmux), "socket path /s/p");
  assert.equal(describeServer({ socketName: "w" }, tmux), 'socket "w"');
  assert.equal(
    describeServer({}, tmux),
    "the server this process runs in (TMUX: /tmp/tmux-1000/work)",
  );
  assert.equal(describeServer({}, undefined), "tmux's default socket (tmux -L default)");
  assert.equal(describeServer({}, ""), "tmux's default socket (tmux -L default)");
});

Deno.test("tmuxSocketPath reads TMUX as tmux does: up to the first comma, none when empty", () => {
  assert.equal(tmuxSocketPath("/a/b,1,2"), "/a/b");
  assert.equal(tmuxSocketPath("/a/b"), "/a/b");
  assert.equal(tmuxSocketPath(",1,2"), null);
  assert.equal(tmuxSocketPath(""), null);
  assert.equal(tmuxSocketPath(undefined), null);
});
