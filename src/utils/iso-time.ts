let lastMs = Number.NaN;
let lastText = '';

/**
 * `new Date(ms).toISOString()`, formatted once per millisecond: at full load tens of answers and log lines share one,
 * and each would otherwise format the same date again.
 */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastText = new Date(ms).toISOString();
  }
  return lastText;
}
