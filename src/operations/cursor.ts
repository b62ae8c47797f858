import { z } from 'zod';
import { CatalogKind } from '../contract/index.ts';
import { hmacSha256 } from './sha256.ts';

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

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array | null {
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Compares in time that does not depend on where the first difference is. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** HMAC-SHA256 of a message under a key; the host may give a native one (the result is the same). */
export type Hmac = (key: Uint8Array, message: Uint8Array) => Uint8Array;

export class CursorCodec {
  private readonly secret: Uint8Array;
  private readonly hmac: Hmac;

  /**
   * `hmac` defaults to the TypeScript implementation, which runs anywhere; the Node server passes node:crypto's, about
   * ten times faster (a catalog page checks one cursor and signs the next). Cursors are the same bytes either way.
   */
  constructor(secret: string = BUILT_IN_CURSOR_SECRET, hmac: Hmac = hmacSha256) {
    if (secret.length === 0) throw new Error('Expected `secret` to be a non-empty string');
    this.secret = encoder.encode(secret);
    this.hmac = hmac;
  }

  encode(payload: CursorPayload): string {
    const json = encoder.encode(JSON.stringify({ v: payload.v, k: payload.k, a: payload.a, s: payload.s }));
    const out = new Uint8Array(MAC_BYTES + json.length);
    out.set(this.mac(json));
    out.set(json, MAC_BYTES);
    return toBase64Url(out);
  }

  /** The payload of a cursor this codec issued, unaltered, or null. */
  decode(cursor: string): CursorPayload | null {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
    const bytes = fromBase64Url(cursor);
    // Decoders ignore stray trailing bits; re-encoding rejects every spelling but the one we issued.
    if (bytes === null || toBase64Url(bytes) !== cursor || bytes.length <= MAC_BYTES) return null;
    const json = bytes.subarray(MAC_BYTES);
    if (!sameBytes(bytes.subarray(0, MAC_BYTES), this.mac(json))) return null;
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(json));
    } catch {
      return null;
    }
    const parsed = CursorPayload.safeParse(value);
    if (!parsed.success || !KEY_PATTERN[parsed.data.k].test(parsed.data.a)) return null;
    return parsed.data;
  }

  private mac(json: Uint8Array): Uint8Array {
    const message = new Uint8Array(DOMAIN.length + json.length);
    message.set(encoder.encode(DOMAIN));
    message.set(json, DOMAIN.length);
    return this.hmac(this.secret, message).subarray(0, MAC_BYTES);
  }
}
