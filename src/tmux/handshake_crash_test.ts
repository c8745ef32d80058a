/**
 * tmux 3.3a dies when a notification reaches a control client half way through its handshake
 * (tmux/tmux#4980): a session made or ended, a pane selected, a client detached. The window is
 * a fraction of a millisecond; here every control-mode client of ours shakes hands slowly
 * (its tmux runs under strace, which delays each message after the first of its handshake), so
 * an act of ours that came in between would take the server down every time. Each test starts
 * a client of ours and, while it is half way, does one of the things that would: the server
 * must still be there, with everything asked for done.
 */
import {
  duringChannelWait,
  killSessionDuringWatch,
  newSessionDuringChannelWait,
  withSlowHandshakes,
} from "../../tests/helpers/slow_handshake.ts";
import { waitFor } from "../../tests/helpers/tmux.ts";

Deno.test("a command over our control connection waits while a channel wait's client shakes hands", async () => {
  await withSlowHandshakes(newSessionDuringChannelWait);
});

Deno.test("a tmux process of ours waits while a watch's client shakes hands", async () => {
  await withSlowHandshakes(killSessionDuringWatch);
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
