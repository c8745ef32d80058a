/**
 * What the tests of acts held by a person's slow hook share (tests/act_hooks_test.ts,
 * tests/act_hooks_more_test.ts): a server with a person attached and the agent's window in the
 * background, a hook that holds tmux-mcp's line after a chosen command, and a tool result's text.
 */

import { connect, type TestClient } from "./mcp.ts";
import { HookGate, TestTmux } from "./tmux.ts";

export type Server = Awaited<ReturnType<typeof TestTmux.start>>;

/** The text of a tool result. */
export function textOf(r: { content?: unknown }): string {
  const content = r.content as { type: string; text?: string }[] | undefined;
  return (content ?? []).map((c) => c.text ?? "").join("\n");
}

/**
 * A server with a person attached to session `personIn` (default `main`, showing its first
 * window), the agent's window `windowId` (pane `paneId`, a shell at its prompt) in the background
 * of `main`, a closed gate, and a client.
 */
export async function withHeldAct(
  fn: (
    t: Server,
    c: TestClient,
    gate: HookGate,
    at: { windowId: string; paneId: string; tty: string },
  ) => Promise<void>,
  personIn = "main",
): Promise<void> {
  const t = await TestTmux.start("main");
  const gate = await HookGate.make();
  let c: TestClient | undefined;
  try {
    const { windowId, paneId } = await t.shellWindow("main");
    if (personIn !== "main") await t.tmux("new-session", "-d", "-s", personIn, "sh");
    const tty = await t.attach(personIn);
    c = await connect({ socketName: t.socket });
    await fn(t, c, gate, { windowId, paneId, tty });
  } finally {
    await gate.open();
    await c?.close();
    await t.kill();
    await gate.remove();
  }
}

/** Holds the line after the command `hook` names, when its arguments match `pattern`. */
export async function holdAfter(
  t: TestTmux,
  gate: HookGate,
  hook: string,
  pattern: string,
): Promise<void> {
  await t.tmux(
    "set-hook",
    "-g",
    hook,
    `if-shell -F '#{m:${pattern},#{hook_arguments}}' { ${gate.command} }`,
  );
}
