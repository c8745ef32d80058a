/**
 * Key names: which strings tmux would send as a key rather than silently typing them as text.
 *
 * `send-keys` types an unknown name (`Ctrl-Cee`, `F13`) as its characters and exits 0, so a
 * typo would reach the program as text. tmux's own parser validates a name without side
 * effects: `list-keys -T root -- KEY` answers `invalid key: KEY` for a bad name and `unknown
 * key: KEY` (or the binding) for a good one. Verdicts are cached per server, since the names a
 * tmux knows do not change while it runs.
 *
 * @module
 */

import { execFast } from "./control.ts";
import { escapeTrailingSemicolon } from "./format.ts";
import { classifyStderr, type ServerAddress, TmuxError, type TmuxRunner } from "./run.ts";

/** Why a key name is refused. */
export interface KeyRefusal {
  readonly key: string;
  /** `invalid`: tmux does not know it; `unsendable`: a mouse or pseudo key that means nothing typed. */
  readonly reason: "invalid" | "unsendable";
}

/** Keys tmux knows but that make no sense to send to a program. */
const UNSENDABLE =
  /Mouse|Wheel|Drag|Click|^(?:[CMS]-)*(?:Any|PasteStart|PasteEnd|FocusIn|FocusOut|User\d+)$/;

/** Longest key name accepted (tmux's longest, `C-M-S-BSpace`-like names, are far shorter). */
export const MAX_KEY_NAME = 32;

const caches = new WeakMap<TmuxRunner, Map<string, Map<string, boolean>>>();
const MAX_CACHED = 1_024;

function cacheFor(runner: TmuxRunner, serverKey: string): Map<string, boolean> {
  let byServer = caches.get(runner);
  if (!byServer) {
    byServer = new Map();
    caches.set(runner, byServer);
  }
  let cache = byServer.get(serverKey);
  if (!cache) {
    cache = new Map();
    byServer.set(serverKey, cache);
  }
  return cache;
}

/** Asks tmux whether it knows `key`. Throws {@link TmuxError} when tmux itself fails. */
async function askTmux(
  runner: TmuxRunner,
  address: ServerAddress,
  key: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const result = await execFast(
    runner,
    address,
    ["list-keys", "-T", "root", "--", escapeTrailingSemicolon(key)],
    { signal },
  );
  const stderr = result.stderr.trim();
  if (/^invalid key/m.test(stderr)) return false;
  if (result.code === 0 || /^unknown key/m.test(stderr)) return true;
  throw new TmuxError(classifyStderr(stderr), stderr.split("\n")[0] || "list-keys failed", stderr);
}

/**
 * Checks key names against the tmux at `address`; `serverKey` names that server's lifetime
 * (socket and pid) for the cache. Returns the refused names, in the order given.
 */
export async function refusedKeys(
  runner: TmuxRunner,
  address: ServerAddress,
  serverKey: string,
  keys: readonly string[],
  signal?: AbortSignal,
): Promise<KeyRefusal[]> {
  const cache = cacheFor(runner, serverKey);
  const unique = [...new Set(keys)];
  const shapeless = (k: string) => k === "" || k.length > MAX_KEY_NAME || /[\s\p{Cc}]/u.test(k);
  const unknown = unique.filter((k) => !shapeless(k) && !cache.has(k));
  const verdicts = await Promise.all(unknown.map((k) => askTmux(runner, address, k, signal)));
  unknown.forEach((k, i) => {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(k, verdicts[i]);
  });
  const refusals: KeyRefusal[] = [];
  for (const key of unique) {
    if (shapeless(key) || cache.get(key) === false) refusals.push({ key, reason: "invalid" });
    else if (UNSENDABLE.test(key)) refusals.push({ key, reason: "unsendable" });
  }
  return refusals;
}
