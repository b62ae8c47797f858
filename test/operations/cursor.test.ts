import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../src/operations/index.ts';

/** Catalog cursors: signed, bound to their kind, refused when altered. */

describe('CursorCodec', () => {
  const codec = new CursorCodec('test secret');
  const payload = fc.constantFrom('clearance' as const, 'product-code' as const).chain((k) =>
    fc.record({
      v: fc.constant(1 as const),
      k: fc.constant(k),
      a: k === 'clearance' ? fc.stringMatching(/^K\d{6}$/) : fc.stringMatching(/^[A-Z]{3}$/),
      s: fc.stringMatching(/^[0-9a-f]{16}$/),
    }),
  );

  it('decodes what it encodes, and the cursor is URL-safe', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const cursor = codec.encode(p);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(codec.decode(cursor)).toEqual(p);
      }),
    );
  });

  it('refuses any change of one character', () => {
    fc.assert(
      fc.property(payload, fc.nat(), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), (p, at, ch) => {
        const cursor = codec.encode(p);
        const i = at % cursor.length;
        fc.pre(cursor[i] !== ch);
        expect(codec.decode(cursor.slice(0, i) + ch + cursor.slice(i + 1))).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('refuses another spelling of the same bytes (stray bits after the last byte)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let checked = 0;
    fc.assert(
      fc.property(payload, (p) => {
        const cursor = codec.encode(p);
        const stray = cursor.length % 4 === 2 ? 4 : cursor.length % 4 === 3 ? 2 : 0;
        const last = alphabet.indexOf(cursor.at(-1)!);
        for (let low = 1; low < 1 << stray; low++) {
          // Decoders read these to the same bytes; only the spelling issued is accepted.
          expect(codec.decode(cursor.slice(0, -1) + alphabet[last | low])).toBeNull();
          checked++;
        }
      }),
    );
    expect(checked).toBeGreaterThan(0);
  });

  it('refuses cursors of another key, truncated ones, and garbage', () => {
    const cursor = codec.encode({ v: 1, k: 'clearance', a: 'K123456', s: '0123456789abcdef' });
    expect(new CursorCodec('other secret').decode(cursor)).toBeNull();
    expect(codec.decode(cursor.slice(0, -2))).toBeNull();
    expect(codec.decode(`${cursor}A`)).toBeNull();
    for (const junk of ['', '=', 'a=b', 'AAAA', '😀', ' '.repeat(20)]) expect(codec.decode(junk)).toBeNull();
  });

  it('the built-in key works when no secret is configured', () => {
    const builtIn = new CursorCodec();
    const cursor = builtIn.encode({ v: 1, k: 'product-code', a: 'DXY', s: '0123456789abcdef' });
    expect(builtIn.decode(cursor)).toMatchObject({ a: 'DXY' });
    expect(() => new CursorCodec('')).toThrow(/secret/);
  });

  it('with a native HMAC gives the same cursors, so hosts with either read each other\'s', () => {
    const native = new CursorCodec('test secret', (key, message) => createHmac('sha256', key).update(message).digest());
    fc.assert(
      fc.property(payload, (p) => {
        const cursor = native.encode(p);
        expect(cursor).toBe(codec.encode(p));
        expect(codec.decode(cursor)).toEqual(p);
        expect(native.decode(codec.encode(p))).toEqual(p);
      }),
    );
  });

  it('checks a cursor it issued or checked before without its MAC, and gives what a codec of its own would', () => {
    let macs = 0;
    const counting = new CursorCodec('test secret', (key, message) => (macs++, createHmac('sha256', key).update(message).digest()));
    const fresh = new CursorCodec('test secret');
    fc.assert(
      fc.property(payload, (p) => {
        macs = 0;
        const cursor = counting.encode(p);
        const again = counting.encode(p);
        const decoded = counting.decode(cursor);
        expect(macs).toBe(1);
        expect(again).toBe(cursor);
        expect(decoded).toEqual(fresh.decode(cursor));
        expect(Object.isFrozen(decoded)).toBe(true);
      }),
    );
    // A cursor sent by another instance is checked once, then known.
    const other = fresh.encode({ v: 1, k: 'clearance', a: 'K000001', s: '0123456789abcdef' });
    macs = 0;
    expect(counting.decode(other)).toEqual({ v: 1, k: 'clearance', a: 'K000001', s: '0123456789abcdef' });
    expect(counting.decode(other)).not.toBeNull();
    expect(macs).toBe(1);
    // Altered, it is still refused, however often it is sent.
    const altered = other.slice(0, -2) + (other.at(-2) === 'A' ? 'B' : 'A') + other.at(-1);
    expect(counting.decode(altered)).toBeNull();
    expect(counting.decode(altered)).toBeNull();
  });
});
