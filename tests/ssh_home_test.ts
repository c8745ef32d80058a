/**
 * SSH hosts under the baked flags for a user whose home folder has a long path. Without write
 * permission the multiplexing sockets go to `%d/.ssh/`, the home the password database names
 * (the in-process tests, which may write, use a short temporary folder instead), and a Unix
 * socket's path has a limit (107 bytes on Linux, 103 on macOS) that ssh's own temporary name
 * for the socket (the ControlPath, a dot and 16 characters) must fit in too. Homes such as
 * `/home/jonathan.richardson@emea.example.com` (42 bytes) are common on machines joined to a
 * directory.
 *
 * The real process runs in a private mount namespace (`unshare -m`) where a copy of
 * /etc/passwd gives the user a home of the length wanted, with a real `~/.ssh` in it; sshd runs
 * outside, as in helpers/sshd.ts. Skipped, saying why, where sshd cannot be started or no mount
 * namespace can be made (it needs root).
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureTest } from "./helpers/skippable.ts";
import { serverWithHome, type Sshd, startSshd } from "./helpers/sshd.ts";
import { StdioServer } from "./helpers/stdio.ts";
import { sh, TestTmux } from "./helpers/tmux.ts";

/** Why these tests cannot run here, or null. */
async function whyNot(): Promise<string | null> {
  const unshare = await sh("unshare", ["-m", "--propagation", "private", "true"], {
    allowFail: true,
  }).catch((error: unknown) => ({ code: 1, stderr: String(error) }));
  if (unshare.code !== 0) {
    return `no private mount namespace (unshare -m needs root): ${unshare.stderr.trim()}`;
  }
  return null;
}

const namespace = await whyNot();
const started = namespace === null ? await startSshd(["h1"]) : namespace;
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`ssh_home_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });
const stopTest = fixtureTest(skip);

/** What a call over SSH from the real process returned, and what the process said. */
interface Outcome {
  readonly result: {
    isError?: boolean;
    structuredContent?: { panes: { id: string }[] };
    content?: { text: string }[];
  };
  /** The pane of the tmux server listed. */
  readonly paneId: string;
  /** Everything the process wrote to stderr, once it ended. */
  readonly stderr: string;
}

/**
 * Runs the real server under the baked flags, with `--ssh h1`, as the current user given a
 * home folder whose path is `length` bytes long (with a `~/.ssh`); lists the panes of a fresh
 * tmux server on h1, then ends the process by closing its input.
 */
async function listOverSshWithHome(length: number): Promise<Outcome> {
  const sshd = started as Sshd;
  const base = await Deno.makeTempDir({ prefix: "tmux-mcp-home-" });
  const t = await TestTmux.start();
  let server: StdioServer | undefined;
  try {
    const home = `${base}/${"j".repeat(length - base.length - 1)}`;
    assert.equal(new TextEncoder().encode(home).length, length);
    server = await serverWithHome(base, home, ["--ssh", "h1", "--ssh-config", sshd.config]);
    await server.initialize();
    const result = await server.callTool("list_panes", { host: "h1", socket_name: t.socket });
    const status = await server.closeStdin();
    assert.equal(status.code, 0, server.stderr);
    return { result: result as Outcome["result"], paneId: t.ids.paneId, stderr: server.stderr };
  } finally {
    await server?.kill();
    await t.kill();
    await Deno.remove(base, { recursive: true }).catch(() => {});
  }
}

sshTest("ssh home: homes of 42 and 62 bytes keep one connection per host in ~/.ssh", async () => {
  // 62: the longest whose socket path (with ssh's 17 characters) fits Linux's 107 bytes.
  for (const length of [42, 62]) {
    const { result, paneId, stderr } = await listOverSshWithHome(length);
    assert.notEqual(result.isError, true, `${length}: ${result.content?.[0]?.text}`);
    assert.deepEqual(result.structuredContent?.panes.map((p) => p.id), [paneId]);
    assert.doesNotMatch(stderr, /connects on its own/, `${length}: ${stderr}`);
  }
});

sshTest(
  "ssh home: a home path too long for any socket: each call connects on its own, and says so",
  async () => {
    // 100 bytes: no socket name in ~/.ssh fits a Unix socket's path.
    const { result, paneId, stderr } = await listOverSshWithHome(100);
    assert.notEqual(result.isError, true, result.content?.[0]?.text);
    assert.deepEqual(result.structuredContent?.panes.map((p) => p.id), [paneId]);
    assert.match(stderr, /too long.*connects on its own/s, stderr);
  },
);

stopTest("ssh home: sshd stops", async () => {
  await (started as Sshd).stop();
});
