import assert from "node:assert/strict";
import {
  HostSessions,
  inSession,
  MAX_SESSIONS_PER_HOST,
  RefusedAtOpen,
  SessionRefused,
  sessionRefused,
} from "./ssh_sessions.ts";

Deno.test("sessionRefused: ssh's words for a session refused on a shared connection", () => {
  assert.ok(sessionRefused(
    "mux_client_request_session: session request failed: Session open refused by peer\r\n",
  ));
  assert.ok(sessionRefused("channel 3: open failed: administratively prohibited: open failed"));
  assert.equal(sessionRefused("ssh: connect to host h port 22: Connection refused"), false);
});

Deno.test("HostSessions: one-shots wait at the cap; long-lived ones leave room for one", async () => {
  const s = new HostSessions();
  const never = new AbortController().signal;
  const releases = [];
  for (let i = 0; i < MAX_SESSIONS_PER_HOST; i++) releases.push(await s.takeOneShot(never));
  let took = false;
  const waiting = s.takeOneShot(never).then((r) => (took = true, r));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(took, false);
  releases.pop()!();
  (await waiting)();
  for (const r of releases) r();
  // Long-lived: at most cap - 1.
  const lasting = [];
  for (let i = 0; i < MAX_SESSIONS_PER_HOST; i++) lasting.push(s.takeLasting(() => {}));
  assert.equal(lasting.filter((r) => r !== null).length, MAX_SESSIONS_PER_HOST - 1);
  // Long-lived ones alone never hold a one-shot back.
  (await s.takeOneShot(never))();
});

Deno.test("HostSessions: a refusal lowers the cap and ends the newest long-lived clients", async () => {
  const s = new HostSessions();
  const ended: number[] = [];
  for (let i = 0; i < 3; i++) s.takeLasting(() => ended.push(i));
  const release = await s.takeOneShot(new AbortController().signal);
  // Refused with 3 others open (the master's not counted): the host allows 3 beside it.
  s.refused();
  assert.equal(s.cap, 3);
  assert.deepEqual(ended, [2], "room for one one-shot beside two long-lived");
  release();
  assert.equal(s.takeLasting(() => {}), null);
});

Deno.test("inSession: sent again once a session ends; out of time, says what the host did", async () => {
  const s = new HostSessions();
  const other = await s.takeOneShot(new AbortController().signal);
  let tries = 0;
  const result = inSession(s, "h1", AbortSignal.timeout(5_000), () => false, () => {
    tries++;
    if (tries === 1) {
      setTimeout(other, 20);
      return Promise.reject(new RefusedAtOpen("h1"));
    }
    return Promise.resolve("ran");
  });
  assert.equal(await result, "ran");
  assert.equal(tries, 2);

  const fresh = new HostSessions();
  const held = await fresh.takeOneShot(new AbortController().signal);
  const failed = inSession(
    fresh,
    "h1",
    AbortSignal.timeout(300),
    () => false,
    () => Promise.reject(new RefusedAtOpen("h1")),
  );
  await assert.rejects(failed, (e: unknown) => {
    assert.ok(e instanceof SessionRefused);
    assert.match(e.message, /MaxSessions\), with 1 other session of this server open there/);
    assert.match(e.message, /nothing ran there/);
    return true;
  });
  held();
});

Deno.test("inSession: refusals with none of ours open are sent again for a while before the host is judged to allow none", async () => {
  // A session of ours just ended may still be closing on a loaded host: refused six times in a
  // row (about 1.5 s), then it runs.
  const s = new HostSessions();
  let tries = 0;
  const ran = await inSession(s, "h1", AbortSignal.timeout(10_000), () => false, () => {
    tries++;
    return tries <= 6 ? Promise.reject(new RefusedAtOpen("h1")) : Promise.resolve("ran");
  });
  assert.equal(ran, "ran");
  assert.equal(tries, 7);
  // A host that allows none beside the master's: said after two seconds of refusals, well
  // before the call's time.
  const began = performance.now();
  let refusals = 0;
  const failed = inSession(s, "h1", AbortSignal.timeout(10_000), () => false, () => {
    refusals++;
    return Promise.reject(new RefusedAtOpen("h1"));
  });
  await assert.rejects(failed, (e: unknown) => {
    assert.ok(e instanceof SessionRefused);
    assert.match(e.message, /with 0 other sessions of this server open there/);
    assert.match(e.message, new RegExp(`It was sent again ${refusals - 1} times\\.`));
    return true;
  });
  const took = performance.now() - began;
  assert.ok(took >= 2_000 && took < 9_000, `judged after ${Math.round(took)} ms`);
});
