/**
 * The fuzz over SSH (`deno task fuzz --ssh`), run small on a fixed seed: the server reaches the
 * world's tmux through an sshd of this machine, and every call names that host. Beside it,
 * what the fuzz's arguments and checks hold for such calls.
 *
 * Skipped, saying why, only where sshd cannot be started; CI installs openssh-server.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ArgumentMaker, type FuzzTool } from "./helpers/fuzz_args.ts";
import { fuzzHolds } from "./helpers/fuzz_holds.ts";
import { FUZZ_TOOLS } from "./helpers/fuzz_run.ts";
import type { FuzzWorld } from "./helpers/fuzz_world.ts";
import { prng } from "./helpers/prng.ts";
import { MarkerBox } from "./helpers/robust.ts";
import { fixtureTest } from "./helpers/skippable.ts";
import { type Sshd, startSshd } from "./helpers/sshd.ts";

const ALIAS = "fuzzhost";
const SEED = 20261206;
const CALLS = 45;

const started = await startSshd([ALIAS]);
const skip = typeof started === "string" ? started : null;
// deno-lint-ignore no-console
if (skip) console.error(`fuzz_ssh_test: skipped: ${skip}`);
const sshTest = fixtureTest(skip, { sanitize: false });

sshTest(
  `fuzz: ${CALLS} random calls over SSH (seed ${SEED}) break nothing`,
  async () => {
    const sshd = started as Sshd;
    await fuzzHolds({ seed: SEED, calls: CALLS, ssh: { alias: ALIAS, config: sshd.config } });
  },
);

sshTest("fuzz over ssh: sshd stops", async () => {
  await (started as Sshd).stop();
});

Deno.test("fuzz args: over SSH every call and row names the host, and a socket of the run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fuzz-args-" });
  try {
    // The schemas as a server with --ssh lists them: every tool takes `host`.
    const host = { type: "string", enum: [ALIAS] };
    const tools: FuzzTool[] = FUZZ_TOOLS.map((t) => ({
      ...t,
      inputSchema: {
        ...t.inputSchema,
        properties: { ...t.inputSchema.properties as object, host },
      },
    }));
    const world = { t: { socket: "world-socket" }, personPanes: ["%1"], agentPane: "%2" };
    const maker = new ArgumentMaker({
      rand: prng(7),
      tools,
      dir,
      markers: await MarkerBox.create(dir),
      spareSocket: "spare-socket",
      host: ALIAS,
    });
    maker.useWorld({
      ...world,
      deadPane: "%3",
      copyPane: "%4",
      personWindow: "@1",
      linkedWindow: "@2",
      personSession: "$1",
      agentSession: "$2",
    } as unknown as FuzzWorld);
    let hosted = 0;
    const check = (args: Record<string, unknown>, what: string) => {
      assert.equal(args.host, ALIAS, `${what} names the host`);
      hosted++;
      assert.ok(
        args.socket_name === "world-socket" || args.socket_name === "spare-socket",
        `${what}: ${JSON.stringify(args).slice(0, 300)}`,
      );
    };
    for (let i = 0; i < 2_000; i++) {
      const tool = tools[i % tools.length];
      const args = maker.argumentsFor(tool, `set ${i}`);
      check(args, tool.name);
      for (const op of (args.operations ?? []) as { arguments?: Record<string, unknown> }[]) {
        if (op.arguments) check(op.arguments, `${tool.name}'s row`);
      }
    }
    assert.ok(hosted > 2_000, `only ${hosted} calls and rows were looked at`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
