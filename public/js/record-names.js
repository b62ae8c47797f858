// Devices' names for a page that lists devices from many record shards (the lineage view), from the snapshot's
// record names files (src/contract/record-names.ts has their layout): one request of byte ranges for the devices'
// index entries, then one for their names, instead of each device's record shard whole. A host that does not serve
// several ranges in one answer (it sends the whole file), or a snapshot without the files, gives no names: the
// page then names the devices from their records, as before.

import { RECORD_NAMES, recordNameEntry, recordNameSpan } from './service-rules.js';

/**
 * The byte ranges `spans` ({ from, length }) of the file at `href` in one request, as a function from a span to its
 * bytes (null for a span the answer does not hold); null when the host answers anything but 206 (the answer's body
 * is then not read). `asked` is called once the request is on its way.
 */
export async function readRanges(href, spans, asked = () => {}) {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  const merged = [];
  for (const s of sorted) {
    const last = merged.at(-1);
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.from + s.length);
    else merged.push({ from: s.from, to: s.from + s.length });
  }
  if (!merged.length) return () => null;
  const stop = new AbortController();
  const sent = fetch(href, { headers: { Range: `bytes=${merged.map((r) => `${r.from}-${r.to - 1}`).join(',')}` }, signal: stop.signal });
  asked();
  const res = await sent;
  if (res.status !== 206) {
    stop.abort();
    return null;
  }
  const body = new Uint8Array(await res.arrayBuffer());
  const parts = [];
  const boundary = /multipart\/byteranges;\s*boundary="?([^";]+)"?/i.exec(res.headers.get('content-type') ?? '');
  if (!boundary) {
    const range = /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
    if (range) parts.push({ from: Number(range[1]), bytes: body });
  } else {
    // Each part: a boundary line, its headers (among them Content-Range), an empty line, then exactly its bytes.
    // Decoded one character per byte, so that positions in the text are positions in the body.
    const text = new TextDecoder('latin1').decode(body);
    const delimiter = `--${boundary[1]}`;
    for (let at = text.indexOf(delimiter); at >= 0; ) {
      const eol = text.indexOf('\r\n', at);
      if (eol < 0 || text.startsWith(`${delimiter}--`, at)) break;
      const start = eol + 2;
      const end = text.indexOf('\r\n\r\n', start);
      const range = end < 0 ? null : /content-range:\s*bytes (\d+)-(\d+)\//i.exec(text.slice(start, end));
      if (!range) break;
      const from = Number(range[1]);
      const length = Number(range[2]) - from + 1;
      parts.push({ from, bytes: body.subarray(end + 4, end + 4 + length) });
      at = text.indexOf(delimiter, end + 4 + length);
    }
  }
  return ({ from, length }) => {
    const part = parts.find((p) => p.from <= from && from + length <= p.from + p.bytes.length);
    return part ? part.bytes.subarray(from - part.from, from - part.from + length) : null;
  };
}

/**
 * The device names of K numbers (each one the snapshot has a record of) as a Map from number to name ('' for a
 * record without one); numbers it cannot name here (a name not in these files, a host or snapshot without them)
 * are left out, for their records to name. `asked` is called once, when its last request is on its way (or when it
 * knows it sends none): from then on requests made after it queue behind it, not before.
 */
export async function readRecordNames(url, numbers, asked = () => {}) {
  let told = false;
  const tell = () => {
    if (!told) asked();
    told = true;
  };
  try {
    return await namesFrom(url, numbers, tell);
  } finally {
    tell();
  }
}

async function namesFrom(url, numbers, asked) {
  const names = new Map();
  const wanted = numbers.filter((k) => /^K\d{6}$/.test(k)).map((k) => ({ k, entry: recordNameEntry(Number(k.slice(1))) }));
  if (!wanted.length) return names;
  const entries = await readRanges(url(RECORD_NAMES.index), wanted.map((w) => w.entry));
  if (!entries) return names;
  const spans = [];
  for (const w of wanted) {
    const entry = entries(w.entry);
    const span = entry && recordNameSpan(entry);
    if (span?.length === 0) names.set(w.k, '');
    else if (span) spans.push({ k: w.k, span });
  }
  if (!spans.length) return names;
  const bytes = await readRanges(url(RECORD_NAMES.names), spans.map((s) => s.span), asked);
  if (!bytes) return names;
  const utf8 = new TextDecoder();
  for (const { k, span } of spans) {
    const name = bytes(span);
    if (name) names.set(k, utf8.decode(name));
  }
  return names;
}
