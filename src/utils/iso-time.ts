let lastMs = Number.NaN;
let lastText = '';

/**
 * `new Date(ms).toISOString()`, formatted once per millisecond: at full load tens of answers and log lines share one,
 * and formatting a date cost about half a microsecond each.
 */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastText = new Date(ms).toISOString();
  }
  return lastText;
}
