import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CatalogKind } from '../contract/index.ts';

/**
 * Catalog cursors: base64url of a 12-byte truncated HMAC-SHA256 followed by a small JSON payload
 * `{v:1, k: kind, a: last key returned, s: snapshot id}`. The MAC makes a cursor tamper-evident; the key names a
 * position, not an offset, so a cursor goes on after its key in any later snapshot.
 *
 * The MAC key comes from CURSOR_SECRET. Without it a fixed key built into the source is used: cursors are then
 * still checked for accidental damage and for edits by clients that do not read this file, but anyone who does can
 * forge one. A forged cursor can only name a starting key, so the worst it does is start a walk elsewhere.
 */
export const BUILT_IN_CURSOR_SECRET = 'device-510k catalog cursor v1; set CURSOR_SECRET to make cursors unforgeable';

const MAC_BYTES = 12;
/** Real cursors are under 100 characters; refusing long ones bounds the work spent on garbage. */
const MAX_CURSOR_CHARS = 512;
const DOMAIN = 'device-510k/catalog-cursor\n';

const KEY_PATTERN: Record<CatalogKind, RegExp> = {
  clearance: /^K\d{6}$/,
  'product-code': /^[A-Z]{3}$/,
};

const CursorPayload = z.strictObject({
  v: z.literal(1),
  k: CatalogKind,
  a: z.string(),
  s: z.string().regex(/^[0-9a-f]{16}$/),
});
export type CursorPayload = z.infer<typeof CursorPayload>;

export class CursorCodec {
  private readonly secret: Buffer;

  constructor(secret: string = BUILT_IN_CURSOR_SECRET) {
    if (secret.length === 0) throw new Error('Expected `secret` to be a non-empty string');
    this.secret = Buffer.from(secret, 'utf8');
  }

  encode(payload: CursorPayload): string {
    const json = Buffer.from(JSON.stringify({ v: payload.v, k: payload.k, a: payload.a, s: payload.s }), 'utf8');
    return Buffer.concat([this.mac(json), json]).toString('base64url');
  }

  /** The payload of a cursor this codec issued, unaltered, or null. */
  decode(cursor: string): CursorPayload | null {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
    const bytes = Buffer.from(cursor, 'base64url');
    // Node's decoder ignores stray trailing bits; re-encoding rejects every spelling but the one we issued.
    if (bytes.toString('base64url') !== cursor || bytes.length <= MAC_BYTES) return null;
    const mac = bytes.subarray(0, MAC_BYTES);
    const json = bytes.subarray(MAC_BYTES);
    if (!timingSafeEqual(mac, this.mac(json))) return null;
    let value: unknown;
    try {
      value = JSON.parse(json.toString('utf8'));
    } catch {
      return null;
    }
    const parsed = CursorPayload.safeParse(value);
    if (!parsed.success || !KEY_PATTERN[parsed.data.k].test(parsed.data.a)) return null;
    return parsed.data;
  }

  private mac(json: Uint8Array): Buffer {
    return createHmac('sha256', this.secret).update(DOMAIN).update(json).digest().subarray(0, MAC_BYTES);
  }
}
