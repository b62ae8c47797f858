/**
 * Predicates in search at scale, in this process (no HTTP): the predicate sections made from a snapshot's edge input
 * as the build makes them, their bytes beside the search index's, and the time of `predicate:` and of the
 * `predicate` facet over the whole index, many rounds each.
 *
 *   npx tsx bench/predicate-search.ts --snapshot DIR --edges DIR [--rounds N]
 *
 * For a snapshot built before predicates were indexed (the sections are made here from --edges, the folder its
 * lineage files were built from); a snapshot built now carries them, and then --edges only checks they agree.
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { predicateSections } from '../build/index/predicates.ts';
import { mergeEdges } from '../build/lineage/merge.ts';
import { findEdgeFolders, readEdgeFolder } from '../build/lineage/read.ts';
import { parseCommandLine } from '../src/cli/args.ts';
import { lineageNumber } from '../src/contract/lineage.ts';
import { runSearch, type SearchRequest } from '../src/search/engine.ts';
import { loadSearchIndex } from '../src/search/load.ts';
import { setSection } from '../src/search/model.ts';

const USAGE = `Usage: npx tsx bench/predicate-search.ts --snapshot DIR --edges DIR [options]

Makes the search index's predicate sections from the edge folders at or below --edges (as the build does), prints
their bytes beside the index's, then times, --rounds times each after one cold run: predicate: of the most-cited
device and of a device cited once, the same narrowed by kind:, the predicate facet over every clearance and over
the most-cited device's citers, and a word with predicate:.

  --snapshot DIR   the snapshot (required)
  --edges DIR      its edge input folder(s) (required)
  --rounds N       runs of each question (100)`;

const values = parseCommandLine('predicate-search', USAGE, { snapshot: { type: 'string', default: '' }, edges: { type: 'string', default: '' }, rounds: { type: 'string', default: '100' } });
if (!values.snapshot || !values.edges) {
  console.error(USAGE);
  process.exit(2);
}
const rounds = Number(values.rounds);
const index = await loadSearchIndex((p) => readFile(join(values.snapshot, p)));
const inputs = await Promise.all((await findEdgeFolders(values.edges)).map(readEdgeFolder));
const started = performance.now();
const merged = mergeEdges(inputs);
const sections = predicateSections(index.docKNumber, { forward: merged.forward, origins: merged.origins });
const made = performance.now() - started;
for (const [name, value] of Object.entries(sections)) setSection(index, name as keyof typeof sections, value as never);

const bytes = Object.values(sections).reduce((s, v) => s + v.byteLength, 0);
const header = JSON.parse(await readFile(join(values.snapshot, 'search/index.json'), 'utf8')) as { blobBytes: number };
const manifest = JSON.parse(await readFile(join(values.snapshot, 'manifest.json'), 'utf8')) as { counts: { bytes: number } };
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`${index.docCount.toLocaleString('en-US')} documents, ${merged.forward.length.toLocaleString('en-US')} edges merged, ${sections.docPreds.length.toLocaleString('en-US')} from documents to ${sections.predCodes.length.toLocaleString('en-US')} devices; made in ${(made / 1000).toFixed(1)} s`);
console.log(`predicate sections ${mb(bytes)}: ${((100 * bytes) / header.blobBytes).toFixed(1)} % of the search index (${mb(header.blobBytes)}), ${((100 * bytes) / manifest.counts.bytes).toFixed(1)} % of the snapshot (${mb(manifest.counts.bytes)})`);

let most = 0;
let once = -1;
for (let p = 0; p < sections.predCodes.length; p++) {
  const n = sections.predDocOffsets[p + 1]! - sections.predDocOffsets[p]!;
  if (n > sections.predDocOffsets[most + 1]! - sections.predDocOffsets[most]!) most = p;
  if (once < 0 && n === 1) once = p;
}
const top = lineageNumber(sections.predCodes[most]!);
const single = lineageNumber(sections.predCodes[Math.max(0, once)]!);
const base = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const questions: [string, SearchRequest][] = [
  [`predicate:${top} (most cited)`, { ...base, query: `predicate:${top}` }],
  [`predicate:${single} (cited once)`, { ...base, query: `predicate:${single}` }],
  [`predicate:${top} kind:named, by decision date`, { ...base, query: `predicate:${top} kind:named`, sort: 'decisionDate:asc' }],
  [`catheter predicate:${top}`, { ...base, query: `catheter predicate:${top}` }],
  ['predicate facet, size 10, every clearance', { ...base, query: '', facets: [{ field: 'predicate', size: 10, order: 'count' }] }],
  [`predicate facet, size null, predicate:${top}`, { ...base, query: `predicate:${top}`, facets: [{ field: 'predicate', size: null, order: 'count' }] }],
  ['kind:named', { ...base, query: 'kind:named' }],
];
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!;
for (const [what, req] of questions) {
  const cold = performance.now();
  const first = runSearch(index, req);
  const coldMs = performance.now() - cold;
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    runSearch(index, req);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`${what}: total ${first.total.toLocaleString('en-US')}; cold ${coldMs.toFixed(1)} ms, p50 ${pct(times, 0.5).toFixed(2)} ms, p99 ${pct(times, 0.99).toFixed(2)} ms, max ${times[times.length - 1]!.toFixed(2)} ms`);
}
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
