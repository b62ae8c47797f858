/** Header parsing for the query endpoint: pure functions over header values. */

/** True for `application/json`, with or without parameters such as `charset`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true;
  const type = header.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json';
}

export type Encoding = 'br' | 'gzip' | 'identity';

/**
 * The best encoding the client accepts: br, then gzip, by the Accept-Encoding header's q-values (RFC 9110 12.5.3).
 * A coding with q=0 is refused even when `*` would allow it.
 */
export function pickEncoding(header: string | undefined): Encoding {
  const { br, gzip } = encodingWeights(header);
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return 'identity';
}

/** The q-value the Accept-Encoding header gives br and gzip (0: not acceptable). */
export function encodingWeights(header: string | undefined): { br: number; gzip: number } {
  if (!header) return { br: 0, gzip: 0 };
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k === 'q' && v !== undefined) weight = Number.parseFloat(v);
    }
    q.set(name.trim(), Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (coding: string): number => q.get(coding) ?? q.get('*') ?? 0;
  return { br: weightOf('br'), gzip: Math.max(weightOf('gzip'), q.get('x-gzip') ?? 0) };
}
