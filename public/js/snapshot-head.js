// The footer and the coverage note need the snapshot's generation time, date range and sources. They are in
// manifest.json, whose first members come before the list of every file (megabytes at scale), so the page asks for
// its first 8 KB with a Range request (any CDN or static host honours it; those members take 1-3 KB, and a 206 answer
// goes uncompressed, so a larger range only costs a phone time); a host that answers with the whole file is read as a stream and cut
// off once those members have arrived.

// The list of files, not counts.files (a number).
const HEAD_END = ',"files":[';

let cached = null;

export function readSnapshotHead(snapshotBase) {
  cached ??= readHead(new URL('manifest.json', snapshotBase)).catch((err) => {
    cached = null;
    throw err;
  });
  return cached;
}

async function readHead(url, ranged = true) {
  const res = await fetch(url, ranged ? { headers: { Range: 'bytes=0-8191' } } : {});
  if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
  if (res.status === 206) {
    const text = await res.text();
    const end = text.indexOf(HEAD_END);
    return end >= 0 ? pick(JSON.parse(`${text.slice(0, end)}}`)) : readHead(url, false);
  }
  if (!res.body) return pick(await res.json());
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) text += decoder.decode(value, { stream: true });
    const end = text.indexOf(HEAD_END);
    if (end >= 0) {
      reader.cancel().catch(() => {});
      return pick(JSON.parse(`${text.slice(0, end)}}`));
    }
    if (done) return pick(JSON.parse(text));
  }
}

function pick(m) {
  return {
    snapshotId: m.snapshotId ?? null,
    generatedAt: m.generatedAt ?? null,
    lastSuccessfulSyncAt: m.lastSuccessfulSyncAt ?? null,
    decisionDateMin: m.decisionDateMin ?? null,
    decisionDateMax: m.decisionDateMax ?? null,
    records: m.counts?.records ?? null,
    sources: Array.isArray(m.sources)
      ? m.sources.map((s) => ({ name: s.name, kind: s.kind, records: s.records, rows: s.rows, decisionDateMin: s.decisionDateMin, decisionDateMax: s.decisionDateMax }))
      : [],
  };
}

/** GETs a JSON file of the snapshot; null on 404 (a shard that does not exist means "no such record"). */
export async function fetchJson(url, signal) {
  const res = await fetch(url, { signal });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`The file ${new URL(url).pathname} could not be loaded (HTTP ${res.status}).`);
  return res.json();
}
