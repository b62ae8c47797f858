/**
 * Waits until `condition` holds, looking again every few milliseconds, and fails naming `what` once `deadlineMs` has
 * passed without it: the one way a test waits for something to happen (never a fixed time). Resolves to the
 * condition's value (a found thing, or true).
 *
 * It runs on the real clock even where a test fakes timers: the functions are taken when this module loads, so a
 * faked setTimeout or Date neither stalls the wait nor moves a faked clock on.
 */
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

export async function until<T>(condition: () => T | undefined | null | false, what = 'the condition', deadlineMs = 10_000): Promise<T> {
  const deadline = realNow() + deadlineMs;
  for (;;) {
    const found = condition();
    if (found !== undefined && found !== null && found !== false) return found;
    if (realNow() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}

/** `turns` turns of the event loop (setImmediate): for work queued behind the network, counted, not timed. */
export async function loopTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}
