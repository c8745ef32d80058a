import assert from "node:assert/strict";
import { configuredName, namesSameSocket } from "./same_socket.ts";
import { TmuxRunner } from "./run.ts";

Deno.test("configuredName: the name tmux's choice goes by, and the path it must then lead to", () => {
  const tmux = "/tmp/tmux-1000/work,4242,0";
  assert.deepEqual(configuredName({}, undefined), { name: "default", path: null });
  assert.deepEqual(configuredName({}, ""), { name: "default", path: null });
  assert.deepEqual(configuredName({}, tmux), { name: "work", path: "/tmp/tmux-1000/work" });
  assert.deepEqual(configuredName({ socketName: "w" }, tmux), { name: "w", path: null });
  assert.deepEqual(configuredName({ socketPath: "/s/p", socketName: "w" }, tmux), {
    name: "p",
    path: "/s/p",
  });
  assert.equal(configuredName({ socketPath: "/s/" }, undefined), null);
  assert.equal(configuredName({ host: "h" }, undefined), null);
});

Deno.test("namesSameSocket: by name at once; by path only once tmux said where names lead", () => {
  const runner = new TmuxRunner();
  assert.equal(namesSameSocket(runner, {}, undefined, "default"), true);
  assert.equal(namesSameSocket(runner, {}, undefined, "other"), false);
  assert.equal(namesSameSocket(runner, { socketName: "w" }, undefined, "w"), true);
  // Not asked yet: each spelling keeps its own key, as two servers would.
  assert.equal(namesSameSocket(runner, { socketPath: "/tmp/tmux-1000/x" }, undefined, "x"), false);
  assert.equal(namesSameSocket(runner, {}, "/tmp/tmux-1000/default,1,0", "default"), false);
});
