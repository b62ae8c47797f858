import type { Encoding } from './media.ts';

/**
 * The headers every JSON answer carries (the contract's section 1), in the order they are sent, with the answer's
 * own after them. `length`: the Content-Length, or null where the platform writes it (the Worker).
 */
export function jsonHeaders(length: number | null, encoding: Encoding, own: Readonly<Record<string, string>>): Record<string, string | number> {
  const head: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Access-Control-Allow-Origin': '*',
    Vary: 'Accept-Encoding',
  };
  if (length !== null) head['Content-Length'] = length;
  Object.assign(head, own);
  if (encoding !== 'identity') head['Content-Encoding'] = encoding;
  return head;
}
