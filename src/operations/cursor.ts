import { z } from 'zod';
import { CatalogKind } from '../contract/index.ts';
import { hmacSha256 } from './sha256.ts';
import { rememberRecent } from '../utils/remember.ts';

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
/**
 * Cursors remembered each way, between this many and twice as many: a page signs the next one, and a walk sends it
 * back a moment later, so a thousand walks at once find theirs. Signing and checking (the MAC, the payload's JSON, its
 * schema) is a good part of a catalog page's cost. Kept small: walks need no more, and more remembered cursors churn
 * through the old generation of V8's heap under pages that are not walks, raising the server's peak for nothing.
 */
const REMEMBERED = 1024;

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
const DOMAIN_BYTES = encoder.encode(DOMAIN);
const decoder = new TextDecoder('utf-8', { fatal: true });

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The 6-bit value of each base64url character by its code, -1 for any other character. */
const VALUE_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE_OF[ALPHABET.charCodeAt(i)] = i;

/** The code of each base64url character by its 6-bit value. */
const CODE_OF = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));

/**
 * base64url without padding, straight from the bytes (btoa and three regular expressions cost more than the MAC). The
 * characters are written as bytes and decoded once, so the string is one flat run: one built by `+=` is a tree of
 * pieces, about 1.3 KB for a cursor kept in memory instead of 150 bytes.
 */
function toBase64Url(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil((bytes.length * 4) / 3));
  let at = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out[at++] = CODE_OF[n >>> 18]!;
    out[at++] = CODE_OF[(n >>> 12) & 63]!;
    out[at++] = CODE_OF[(n >>> 6) & 63]!;
    out[at++] = CODE_OF[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out[at++] = CODE_OF[n >>> 18]!;
    out[at++] = CODE_OF[(n >>> 12) & 63]!;
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out[at++] = CODE_OF[n >>> 18]!;
    out[at++] = CODE_OF[(n >>> 12) & 63]!;
    out[at++] = CODE_OF[(n >>> 6) & 63]!;
  }
  return decoder.decode(out.subarray(0, at));
}

/**
 * The bytes of unpadded base64url text, or null when it holds another character, cannot be such text, or is not the
 * one spelling `toBase64Url` gives (the bits past the last byte are not all zero: decoders ignore them).
 */
function fromBase64Url(text: string): Uint8Array | null {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let held = 0;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? (VALUE_OF[code] as number) : -1;
    if (value < 0) return null;
    bits = ((bits << 6) | value) & 0xffffff;
    held += 6;
    if (held >= 8) {
      held -= 8;
      out[at++] = (bits >>> held) & 0xff;
    }
  }
  return (bits & ((1 << held) - 1)) === 0 ? out : null;
}

/** Compares in time that does not depend on where the first difference is. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** The payload a cursor's JSON text holds, frozen, or null when it is not JSON of the payload's shape. */
function payloadOf(text: string): Readonly<CursorPayload> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = CursorPayload.safeParse(value);
  if (!parsed.success || !KEY_PATTERN[parsed.data.k].test(parsed.data.a)) return null;
  return Object.freeze(parsed.data);
}

/** HMAC-SHA256 of a message under a key; the host may give a native one (the result is the same). */
export type Hmac = (key: Uint8Array, message: Uint8Array) => Uint8Array;

export class CursorCodec {
  private readonly secret: Uint8Array;
  private readonly hmac: Hmac;
  /** Cursors by their payload's JSON, and payloads by their cursor (null for one refused): pure functions of the key. */
  private readonly signed = rememberRecent(REMEMBERED, (json: string) => this.sign(json));
  private readonly checked = rememberRecent(REMEMBERED, (cursor: string) => this.check(cursor));

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
    return this.signed(JSON.stringify({ v: payload.v, k: payload.k, a: payload.a, s: payload.s }));
  }

  /** The payload of a cursor this codec issued, unaltered, or null. The payload is frozen: answers share it. */
  decode(cursor: string): Readonly<CursorPayload> | null {
    // Refused before it is remembered: a long string is never kept.
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS) return null;
    return this.checked(cursor);
  }

  private sign(text: string): string {
    const json = encoder.encode(text);
    const out = new Uint8Array(MAC_BYTES + json.length);
    out.set(this.mac(json));
    out.set(json, MAC_BYTES);
    const cursor = toBase64Url(out);
    // The walk sends it back next: its payload is then known without checking the MAC again; the same parse and schema
    // as `check` make it the very value `check` would give.
    this.checked.prime(cursor, payloadOf(text));
    return cursor;
  }

  /**
   * Another kind of cursor (an export's) signed with the same key: base64url of the MAC then `text`. `domain` goes
   * into the MAC, so a cursor of one kind never passes as one of another.
   */
  signAs(domain: string, text: string): string {
    const body = encoder.encode(text);
    const out = new Uint8Array(MAC_BYTES + body.length);
    out.set(this.macOf(encoder.encode(`${domain}\n`), body));
    out.set(body, MAC_BYTES);
    return toBase64Url(out);
  }

  /** The text of a cursor `signAs(domain, …)` issued, unaltered, or null. */
  openAs(domain: string, cursor: string): string | null {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
    const bytes = fromBase64Url(cursor);
    if (bytes === null || bytes.length <= MAC_BYTES) return null;
    const body = bytes.subarray(MAC_BYTES);
    if (!sameBytes(bytes.subarray(0, MAC_BYTES), this.macOf(encoder.encode(`${domain}\n`), body))) return null;
    try {
      return decoder.decode(body);
    } catch {
      return null;
    }
  }

  private check(cursor: string): Readonly<CursorPayload> | null {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
    const bytes = fromBase64Url(cursor);
    if (bytes === null || bytes.length <= MAC_BYTES) return null;
    const json = bytes.subarray(MAC_BYTES);
    if (!sameBytes(bytes.subarray(0, MAC_BYTES), this.mac(json))) return null;
    let text: string;
    try {
      text = decoder.decode(json);
    } catch {
      return null;
    }
    return payloadOf(text);
  }

  private mac(json: Uint8Array): Uint8Array {
    return this.macOf(DOMAIN_BYTES, json);
  }

  private macOf(domain: Uint8Array, body: Uint8Array): Uint8Array {
    const message = new Uint8Array(domain.length + body.length);
    message.set(domain);
    message.set(body, domain.length);
    return this.hmac(this.secret, message).subarray(0, MAC_BYTES);
  }
}
