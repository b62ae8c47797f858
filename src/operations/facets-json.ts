import { joinBytes } from '../utils/join-bytes.ts';
import { JsonBytes } from './types.ts';

/**
 * Facets whose values are many (counts of every applicant or product code at `size: null`: some ten thousand values
 * and hundreds of kilobytes of JSON at a million records) are written as JSON a piece at a time, with the host's turn
 * between pieces: in one piece, their text and its bytes held the event loop for tens of milliseconds on a loaded
 * machine, past every slice of the search that counted them. Fewer values are written at once, as before.
 */
export const FACET_VALUES_AT_ONCE = 2_000;

/** Values of one facet written between two turns. */
const PIECE_VALUES = 1_000;

const encoder = new TextEncoder();

type FacetLike = { readonly field: string; readonly values: readonly unknown[] };

/** How many values the facets list in all. */
export const facetValueCount = (facets: readonly FacetLike[]): number => facets.reduce((n, f) => n + f.values.length, 0);

/**
 * The facets as JSON bytes equal to `JSON.stringify(facets)`, awaiting `pause` after each piece of values. Each facet
 * is written as its members in their order, `values` last (as the engine makes them); one that is not is written whole.
 */
export async function facetsJson<T extends readonly FacetLike[]>(facets: T, pause: () => Promise<void>): Promise<JsonBytes<T>> {
  const pieces: Uint8Array[] = [encoder.encode('[')];
  for (const [i, facet] of facets.entries()) {
    const keys = Object.keys(facet);
    const prefix = i > 0 ? ',' : '';
    if (keys[keys.length - 1] !== 'values') {
      pieces.push(encoder.encode(prefix + JSON.stringify(facet)));
      continue;
    }
    // The facet with no values, opened where its values go: `{…,"values":[` (its last two characters are `]}`).
    const empty = JSON.stringify({ ...facet, values: [] });
    pieces.push(encoder.encode(prefix + empty.slice(0, -2)));
    for (let at = 0; at < facet.values.length; at += PIECE_VALUES) {
      const list = JSON.stringify(facet.values.slice(at, at + PIECE_VALUES));
      pieces.push(encoder.encode((at > 0 ? ',' : '') + list.slice(1, -1)));
      await pause();
    }
    pieces.push(encoder.encode(']}'));
  }
  pieces.push(encoder.encode(']'));
  return new JsonBytes<T>(joinBytes(pieces));
}
