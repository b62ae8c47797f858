/** Small numeric helpers shared by the benchmark's parts. */

/** The nearest-rank percentile of `samples` (p in 0..100); NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** The median of a few rounds' figures; NaN for none. */
export function median(values: readonly number[]): number {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The middle run of a few (the later of the two middle ones for an even count): a figure one run measured, for
 * figures that are read together (a page's time with its bytes), where an average of two runs would be neither.
 */
export function middleRun(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** Bytes as whole KB (1,024 bytes): "274 KB". */
export const kb = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KB`;

/** Milliseconds as seconds with two decimals: "2.48 s". */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

export const MiB = 1024 * 1024;

export const mib = (bytes: number): string => (Number.isFinite(bytes) ? `${Math.round(bytes / MiB).toLocaleString('en-US')} MiB` : 'n/a');

export const fixed = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/** Requests per second, rounded to what the noise allows. */
export const rps = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');

/** A latency in milliseconds with enough digits for sub-millisecond figures. */
export const ms = (x: number): string => (!Number.isFinite(x) ? 'n/a' : x < 1 ? `${x.toFixed(2)} ms` : x < 100 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`);

/** "0.62×": a ratio of two figures, or n/a when either is missing. */
export const ratio = (x: number): string =>
  !Number.isFinite(x) ? 'n/a' : `${x >= 100 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`;
