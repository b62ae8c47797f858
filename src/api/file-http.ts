/**
 * HTTP semantics of a static file (RFC 9110), as pure functions over header values: the content type of each file
 * kind the snapshot holds, conditional requests, and byte ranges.
 */

import { DOWNLOAD_MEDIA_TYPES } from '../contract/index.ts';

const TYPES: [RegExp, string][] = [
  [/\.json$/, 'application/json; charset=utf-8'],
  [/\.m?js$/, 'text/javascript; charset=utf-8'],
  [/\.css$/, 'text/css; charset=utf-8'],
  [/\.html?$/, 'text/html; charset=utf-8'],
  [/\.txt$/, 'text/plain; charset=utf-8'],
  [/\.atom$/, 'application/atom+xml; charset=utf-8'],
  [/\.ndjson$/, 'application/x-ndjson; charset=utf-8'],
  [/\.svg$/, 'image/svg+xml'],
  [/\.wasm$/, 'application/wasm'],
  [/\.gz$/, 'application/gzip'],
  [/\.parquet$/, DOWNLOAD_MEDIA_TYPES.parquet],
  [/\.sqlite$/, DOWNLOAD_MEDIA_TYPES.sqlite],
];

/**
 * The Content-Type of a file by its name. Everything else the snapshot holds is binary: the record table (`.bin`),
 * the search index parts, Pagefind's `.pf_*` files and `wasm.*.pagefind` (gzip that Pagefind's script undoes itself),
 * and `.br` files asked for by name.
 */
export function contentTypeFor(path: string): string {
  for (const [pattern, type] of TYPES) if (pattern.test(path)) return type;
  return 'application/octet-stream';
}

/** Text worth compressing on the fly when it has no precompressed sibling. */
export function isCompressibleType(path: string): boolean {
  return /\.(json|m?js|css|html?|txt|svg)$/.test(path);
}

/** An HTTP-date (RFC 9110 5.6.7) of a time, to the second. */
export function httpDate(at: Date | string): string {
  return new Date(at).toUTCString();
}

/** The entity tags of an If-None-Match or If-Match header; `*` stands for any. */
function entityTags(header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

const opaque = (tag: string): string => tag.replace(/^W\//, '');

/**
 * Whether a GET or HEAD should answer 304 (RFC 9110 13.2.2): If-None-Match decides when present (weak comparison);
 * otherwise If-Modified-Since, when it is a valid date no earlier than the file's last modification.
 */
export function notModified(headers: { 'if-none-match'?: string; 'if-modified-since'?: string }, etag: string, lastModified: Date): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) {
    const tags = entityTags(inm);
    return tags.includes('*') || tags.some((t) => opaque(t) === opaque(etag));
  }
  const ims = headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  // HTTP dates have whole seconds: compare the file's time at that precision.
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
}

/**
 * Whether a request's precondition fails (RFC 9110 13.1.1, 13.1.4, 13.2.2 steps 1 and 2): If-Match, when present,
 * by strong comparison (`*` matches any current file; a weak entity tag never matches); otherwise If-Unmodified-Since,
 * when it is a valid date earlier than the file's last modification. Such a request gets 412.
 */
export function preconditionFails(headers: { 'if-match'?: string; 'if-unmodified-since'?: string }, etag: string, lastModified: Date): boolean {
  const im = headers['if-match'];
  if (im !== undefined) {
    const tags = entityTags(im);
    if (tags.includes('*')) return false;
    return !tags.some((t) => !t.startsWith('W/') && !etag.startsWith('W/') && t === etag);
  }
  const ius = headers['if-unmodified-since'];
  if (ius === undefined) return false;
  const since = Date.parse(ius);
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) * 1000 > since;
}

/**
 * Whether a Range may be honoured under If-Range (RFC 9110 13.1.5): absent, or naming the representation by its
 * strong entity tag, or by exactly its Last-Modified date.
 */
export function ifRangeHolds(header: string | undefined, etag: string, lastModified: Date): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return !value.startsWith('W/') && !etag.startsWith('W/') && value === etag;
  const at = Date.parse(value);
  return Number.isFinite(at) && at === Math.floor(lastModified.getTime() / 1000) * 1000;
}

export type RangeResult = { kind: 'none' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One byte range of a file of `size` bytes (RFC 9110 14.1.2): `bytes=a-b`, `bytes=a-` or the suffix `bytes=-n`,
 * with `end` inclusive and clipped to the file. A header that is not one valid range of bytes (another unit,
 * several ranges, bad syntax) is ignored and the whole file is sent, as the RFC allows; a valid range that starts
 * past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'none' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: 'none' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'none' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Number(last);
  return { kind: 'range', start, end: Math.min(end, size - 1) };
}

/** Percent-encoded `/`, `\` or NUL: a path that names a separator this way is refused rather than decoded. */
export function hasEncodedSeparator(rawPath: string): boolean {
  return /%(2f|5c|00)/i.test(rawPath);
}
