/**
 * How many exports a process streams at once. An export holds a batch of records (a few MiB) and, compressed, a
 * thread of the pool; past the bound a request is refused straight away (503 `overloaded` with Retry-After) rather
 * than queued, so that a burst of exports, or clients that never read theirs, cannot take the server's memory.
 */
export type ExportSlots = {
  /** Exports holding a slot now. */
  readonly active: number;
  readonly limit: number;
  /** A slot and the function that gives it back (once, however often called), or null when all are taken. */
  tryTake(): (() => void) | null;
};

export function createExportSlots(limit: number): ExportSlots {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`Expected \`exportConcurrency\` to be a whole number from 1 and up, got ${limit}`);
  let active = 0;
  return {
    get active() {
      return active;
    },
    limit,
    tryTake() {
      if (active >= limit) return null;
      active++;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        active--;
      };
    },
  };
}
