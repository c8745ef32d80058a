/**
 * tmux 3.3a dies when a notification reaches a control client half way through its handshake
 * (tmux/tmux#4980): a session made or ended, a pane selected, a client detached. The window is
 * a fraction of a millisecond; here every control-mode client of ours shakes hands slowly
 * (its tmux runs under strace, which delays each message after the first of its handshake), so
 * an act of ours that came in between would take the server down every time. Each test starts
 * a client of ours and, while it is half way, does one of the things that would: the server
 * must still be there, with everything asked for done.
 */
import assert from "node:assert/strict";
import { type SlowHandshakes, withSlowHandshakes } from "../../tests/helpers/slow_handshake.ts";
import { waitFor } from "../../tests/helpers/tmux.ts";
import { controlFor } from "./control.ts";

/**
 * With our command client attached, starts a channel wait (its client a control-mode one) and,
 * while that client is half way through its handshake, runs `act`; then lets the wait end.
 */
async function duringChannelWait(
  { t, runner, address, halfWay }: SlowHandshakes,
  act: (control: ReturnType<typeof controlFor>) => Promise<void>,
): Promise<void> {
  const control = controlFor(runner, address);
  await control.exec(["display-message", "-p", "x"]);
  const wait = runner.run(address, ["wait-for", "hold-chan"], { tiedToProcess: true });
  wait.catch(() => {}); // awaited below, unless the test fails first
  await halfWay();
  await act(control);
  await t.tmux("wait-for", "-S", "hold-chan");
  await wait;
}

Deno.test("a command over our control connection waits while a channel wait's client shakes hands", async () => {
  await withSlowHandshakes(async (ctx) => {
    // %sessions-changed goes to every control client, a session or not.
    await duringChannelWait(ctx, async (control) => {
      await control.exec(["new-session", "-d", "-s", "made during a handshake"]);
    });
    assert.match(await ctx.t.tmux("list-sessions", "-F", "#{session_name}"), /made during/);
  });
});

Deno.test("a tmux process of ours waits while a watch's client shakes hands", async () => {
  await withSlowHandshakes(async ({ t, runner, address, halfWay }) => {
    const other =
      (await t.tmux("new-session", "-d", "-s", "watched", "-P", "-F", "#{session_id} #{pane_id}"))
        .trim().split(" ");
    await t.tmux("new-session", "-d", "-s", "doomed");
    const control = controlFor(runner, address);
    const watching = control.watch(other[1], [other[0]], () => {});
    watching.catch(() => {}); // awaited below, unless the test fails first
    await halfWay();
    await runner.run(address, ["kill-session", "-t", "doomed"]);
    (await watching).close();
    assert.doesNotMatch(await t.tmux("list-sessions", "-F", "#{session_name}"), /doomed/);
  });
});

Deno.test("our control clients leave only once a channel wait's client has shaken hands", async () => {
  await withSlowHandshakes(async (ctx) => {
    // Their end tells every control client `%client-detached`.
    await duringChannelWait(ctx, async (control) => {
      control.retire();
      await waitFor(() => control.connections === 0, "our control clients gone");
    });
  });
});
