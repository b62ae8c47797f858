import { EXTENSION_TARGETS } from './extensions.ts';
import { HOSTILE_TARGETS, targetedSearch } from './hostile.ts';
import type { Results, SizeResults } from './results.ts';
import type { IsolateMemory } from './worker.ts';
import { fixed, MiB, mib, ms, ratio, rps } from './stats.ts';

/** The run as Markdown tables (readable as they are in a terminal, and pasted as they are into the docs). */

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const count = (n: number) => n.toLocaleString('en-US');
const pair = (a: string, b: string) => `${a} / ${b}`;

export function buildTable(sizes: SizeResults[]): string {
  return table(
    ['data', 'records', 'build', 'slowest stages', 'peak memory', 'snapshot'],
    sizes.map((s) => [
      s.label,
      count(s.records),
      `${fixed(s.build.seconds)} s${s.build.cached ? ` (cached, measured ${s.build.measuredAt.slice(0, 10)})` : ''}`,
      [...(s.build.stages ?? [])]
        .sort((a, b) => b.seconds - a.seconds)
        .slice(0, 2)
        .map((x) => `${x.name} ${fixed(x.seconds)} s`)
        .join(', '),
      mib(s.build.peakRssBytes),
      `${count(s.build.files)} files, ${(s.build.bytes / 1e6).toFixed(0)} MB`,
    ]),
  );
}

export function lookupTable(sizes: SizeResults[]): string {
  const rows: string[][] = [];
  for (const s of sizes) {
    for (const l of s.lookups) {
      rows.push([
        s.label,
        l.name,
        count(l.distinctRequests),
        rps(l.ours.rps),
        l.nginx ? rps(l.nginx.rps) : 'skipped',
        ratio(l.ratio),
        pair(ms(l.ours.p50Ms), ms(l.ours.p99Ms)),
        l.nginx ? pair(ms(l.nginx.p50Ms), ms(l.nginx.p99Ms)) : 'n/a',
        pair(count(Math.round(l.ours.bytesPerResponse)), l.nginx ? count(Math.round(l.nginx.bytesPerResponse)) : 'n/a'),
      ]);
    }
  }
  return table(['data', 'operation', 'distinct requests', 'ours req/s', 'nginx req/s', 'ours/nginx', 'ours p50 / p99', 'nginx p50 / p99', 'bytes per answer, ours / nginx'], rows);
}

/** Node's own floor beside ours and nginx's, for meta: how much of the gap is Node and how much is our code. */
export function floorLines(sizes: SizeResults[]): string[] {
  return sizes.flatMap((s) => {
    const l = s.lookups.find((x) => x.floor);
    if (!l?.floor) return [];
    const vsNginx = l.nginx ? `, ${ratio(l.floor.rps / l.nginx.rps)} of nginx` : '';
    return [`- ${s.label}: a bare node:http server sending meta.json's bytes does ${rps(l.floor.rps)} req/s (p50 / p99 ${ms(l.floor.p50Ms)} / ${ms(l.floor.p99Ms)})${vsNginx}; ours is ${ratio(l.ours.rps / l.floor.rps)} of that.`];
  });
}

export function searchTable(sizes: SizeResults[]): string {
  return table(
    ['data', 'ours p50 / p99', 'SQLite FTS5 p50 / p99', 'SQLite / ours, p50 and p99', 'same totals and facets', 'over HTTP: req/s, p50 / p99', 'over HTTP, answer cache off'],
    sizes.map((s) => {
      const x = s.search;
      return [
        s.label,
        x ? pair(ms(x.ours.p50Ms), ms(x.ours.p99Ms)) : 'n/a',
        x?.sqlite ? pair(ms(x.sqlite.p50Ms), ms(x.sqlite.p99Ms)) : 'skipped',
        x?.sqlite ? `${ratio(x.speedupP50)}, ${ratio(x.speedupP99)}` : 'n/a',
        x?.sqlite ? `${x.compared - x.mismatches} of ${x.compared}` : 'n/a',
        s.searchHttp ? `${rps(s.searchHttp.rps)}, ${pair(ms(s.searchHttp.p50Ms), ms(s.searchHttp.p99Ms))}` : 'n/a',
        s.searchHttpUncached ? `${rps(s.searchHttpUncached.rps)}, ${pair(ms(s.searchHttpUncached.p50Ms), ms(s.searchHttpUncached.p99Ms))}` : 'n/a',
      ];
    }),
  );
}

/** Search over HTTP alone: the answer cache on, and off (every request runs the engine). */
export function searchHttpTable(sizes: SizeResults[]): string {
  const cell = (x: SizeResults['searchHttp'] | undefined) => (x ? `${rps(x.rps)}, ${pair(ms(x.p50Ms), ms(x.p99Ms))}` : 'n/a');
  return table(
    ['data', 'search over HTTP: req/s, p50 / p99', 'answer cache off'],
    sizes.map((s) => [s.label, cell(s.searchHttp), cell(s.searchHttpUncached)]),
  );
}

/** Median latency by kind of query at the largest size both engines ran: where each engine spends its time. */
export function kindTable(sizes: SizeResults[]): string | null {
  const s = [...sizes].reverse().find((x) => x.search?.sqlite);
  if (!s?.search?.sqlite) return null;
  const ours = s.search.ours.byKind;
  const sqlite = s.search.sqlite.byKind;
  return [
    `By kind of query, at ${s.label} (median over all rounds):`,
    '',
    table(
      ['kind of query', 'ours p50', 'SQLite FTS5 p50', 'SQLite / ours'],
      Object.keys(ours).map((k) => [k, ms(ours[k]!), ms(sqlite[k] ?? Number.NaN), ratio((sqlite[k] ?? Number.NaN) / ours[k]!)]),
    ),
  ].join('\n');
}

/** Issue 12's figures: the engine on qualifier and sorted queries (ours and SQLite's), and the export. */
export function extensionsTable(sizes: SizeResults[]): string | null {
  const measured = sizes.filter((s) => s.extensions);
  if (measured.length === 0) return null;
  const group = (f: { byGroup?: Record<string, { p50Ms: number; p99Ms: number }> } | null | undefined, g: string) => {
    const x = f?.byGroup?.[g];
    return x ? pair(ms(x.p50Ms), ms(x.p99Ms)) : 'n/a';
  };
  // Runs from before the cold and warm figures were told apart had one of each format, read as it came.
  const exported = (s: SizeResults, format: string, pageCache: string) => {
    const e = s.extensions!.exports.find((x) => x.format === format && (x.pageCache ?? 'warm') === pageCache);
    return e ? `${rps(e.recordsPerSecond)} (${count(e.records)}), RSS +${mib(e.rssGrowthBytes)}` : 'n/a';
  };
  return table(
    ['data', 'qualifiers p50 / p99, ours', 'SQLite', 'sorted p50 / p99, ours', 'SQLite', 'same answers', 'export NDJSON records/s, cold', 'warm', 'export CSV records/s, cold', 'warm'],
    measured.map((s) => {
      const x = s.extensions!.search;
      return [
        s.label,
        group(x?.ours, 'qualifier'),
        group(x?.sqlite, 'qualifier'),
        group(x?.ours, 'sorted'),
        group(x?.sqlite, 'sorted'),
        x?.sqlite ? `${x.compared - x.mismatches} of ${x.compared}` : 'n/a',
        exported(s, 'ndjson', 'cold'),
        exported(s, 'ndjson', 'warm'),
        exported(s, 'csv', 'cold'),
        exported(s, 'csv', 'warm'),
      ];
    }),
  );
}

/** Issue 12's targets, at the largest size measured. */
export function extensionVerdicts(r: Results): string[] {
  const s = [...r.sizes].reverse().find((x) => x.extensions);
  if (!s) return [];
  const out: string[] = [];
  const t = EXTENSION_TARGETS;
  const groups = s.extensions!.search?.ours.byGroup ?? {};
  for (const g of ['qualifier', 'sorted']) {
    const x = groups[g];
    if (x) out.push(`Engine p99 on ${g} queries under ${t.engineP99Ms} ms at ${s.label}: ${x.p99Ms < t.engineP99Ms ? 'met' : 'missed'} (${ms(x.p99Ms)}).`);
  }
  for (const e of s.extensions!.exports) {
    const ok = e.recordsPerSecond >= t.exportRecordsPerSecond && e.rssGrowthBytes < t.exportRssGrowthBytes;
    out.push(
      `Export ${e.format} (${e.pageCache ?? 'page cache not told'}) of ${count(e.records)} records at >= ${rps(t.exportRecordsPerSecond)} records/s with RSS growth < ${mib(t.exportRssGrowthBytes)} at ${s.label}: ${ok ? 'met' : 'missed'} (${rps(e.recordsPerSecond)} records/s, +${mib(e.rssGrowthBytes)}).`,
    );
  }
  return out;
}

export function memoryTable(sizes: SizeResults[]): string {
  return table(
    ['data', 'server after start', 'server under load (peak)', 'search process: ours / SQLite'],
    sizes.map((s) => [
      s.label,
      s.memory ? mib(s.memory.afterStartBytes) : 'n/a',
      s.memory ? mib(s.memory.underLoadBytes) : 'n/a',
      s.search ? pair(mib(s.search.ours.rssBytes), s.search.sqlite ? mib(s.search.sqlite.rssBytes) : 'n/a') : 'n/a',
    ]),
  );
}

export function allCoresTable(sizes: SizeResults[]): string | null {
  const rows: string[][] = [];
  for (const s of sizes) {
    if (!s.allCores) continue;
    for (const l of s.allCores.lookups) {
      rows.push([s.label, l.name, rps(l.ours.rps), l.nginx ? rps(l.nginx.rps) : 'skipped', ratio(l.ratio), pair(ms(l.ours.p50Ms), ms(l.ours.p99Ms))]);
    }
    const h = s.allCores.searchHttp;
    if (h) rows.push([s.label, 'search over HTTP', rps(h.rps), 'n/a', 'n/a', pair(ms(h.p50Ms), ms(h.p99Ms))]);
  }
  if (rows.length === 0) return null;
  const workers = sizes.find((s) => s.allCores)?.allCores?.workers ?? 0;
  return [
    `**All cores: ours with WORKERS=auto (${workers} workers) against nginx with a worker per core**`,
    '',
    table(['data', 'operation', 'ours req/s', 'nginx req/s', 'ours/nginx', 'ours p50 / p99'], rows),
  ].join('\n');
}

export function pipeliningTable(sizes: SizeResults[]): string | null {
  const rows = sizes
    .filter((s) => s.pipelining)
    .map((s) => {
      const p = s.pipelining!;
      return [
        s.label,
        `${p.connections} connections, ${(p.bytesSent / 1e6).toFixed(1)} MB, ${count(p.requestsSent)} requests never read`,
        mib(p.peakRssBytes),
        `${ms(p.metaMaxMs)} (${p.metaAnswers} answered, ${p.metaFailures} failed)`,
      ];
    });
  if (rows.length === 0) return null;
  return [
    '**Pipelining clients that never read, against the one-process server**',
    '',
    table(['data', 'attack', 'server peak RSS', 'slowest concurrent meta'], rows),
  ].join('\n');
}

const metOr = (ok: boolean) => (ok ? 'met' : 'missed');

/**
 * The hostile section: each attack beside the same figure on the quiet server, with its target met or missed. The
 * load average is shown with it: on a shared machine other work stretches every wall-clock figure here.
 */
export function hostileTable(sizes: SizeResults[]): string | null {
  const blocks: string[] = [];
  for (const s of sizes) {
    const h = s.hostile;
    if (!h) continue;
    const T = HOSTILE_TARGETS;
    const rows: string[][] = [];
    const quietMeta = `${ms(h.quietMeta.p50Ms)} / ${ms(h.quietMeta.maxMs)}`;
    const { prefix, facets } = targetedSearch(h);
    for (const r of h.search) {
      const targets: string[] = [];
      if (r === prefix) targets.push(`answered or refused < ${T.searchMs} ms: ${metOr(r.ms < T.searchMs)}`);
      if (r === prefix || r === facets) targets.push(`meta < ${T.metaMs} ms: ${metOr(r.metaMax < T.metaMs)}`);
      const openFda = r.name.startsWith('openFDA ');
      if (openFda) targets.push(`meta < ${T.metaMs} ms: ${metOr(r.metaMax < T.metaMs)}; RSS < ${mib(T.exportRssBytes)}: ${metOr(r.rssMaxBytes < T.exportRssBytes)}`);
      if (r.unanswered) targets.push(`every request answered: missed (${r.unanswered} closed, refused or timed out)`);
      const rss = Number.isFinite(r.rssMaxBytes) ? `peak ${mib(r.rssMaxBytes)}` : 'n/a';
      rows.push([r.name, `${r.answered}, ${ms(r.ms)}`, quietMeta, `${ms(r.metaMedian)} / ${ms(r.metaMax)} (${r.metaCount}${r.metaFailed ? `, ${r.metaFailed} unanswered` : ''})`, rss, targets.join('; ') || 'none']);
    }
    const e = h.exports;
    if (e) {
      const statuses = Object.entries(e.statuses).map(([k, n]) => `${n}× ${k}`).join(', ');
      rows.push([
        `${e.clients} exports that never read, held ${fixed(e.holdMs / 1000, 0)} s`,
        statuses,
        `${ms(e.quietMetaP50Ms)} / n/a`,
        `${ms(e.metaP50Ms)} / ${ms(e.metaMaxMs)} (p95 ${ms(e.metaP95Ms)}, ${e.metaCount})`,
        `${mib(e.rssBeforeBytes)} → ${mib(e.peakRssBytes)}`,
        `RSS < ${mib(T.exportRssBytes)}: ${metOr(e.peakRssBytes < T.exportRssBytes)}; meta < ${T.metaMs} ms: ${metOr(e.metaMaxMs < T.metaMs)}`,
      ]);
    }
    const p = h.pipelining;
    if (p) {
      rows.push([
        `${p.connections} clients × ${p.requestsPerConnection} pipelined requests with ${p.bodyBytes / 1024} KiB bodies, never read`,
        `${(p.bytesSent / 1e6).toFixed(0)} MB sent in ${p.seconds} s`,
        `n/a / ${ms(p.quietMetaMaxMs)}`,
        `n/a / ${ms(p.metaMaxMs)} (${p.metaAnswers} answered, ${p.metaFailures} failed)`,
        `${mib(p.rssBeforeBytes)} → ${mib(p.peakRssBytes)}`,
        `RSS < ${mib(T.pipeliningRssBytes)}: ${metOr(p.peakRssBytes < T.pipeliningRssBytes)}`,
      ]);
    }
    for (const d of h.downloads ?? []) {
      rows.push([
        d.name,
        `exit ${d.exitCode} in ${fixed(d.seconds)} s, message ${d.messageAsExpected ? 'as expected' : 'NOT as expected'}, snapshot ${d.snapshotUntouched ? 'untouched' : 'CHANGED'}`,
        'n/a',
        'n/a',
        `peak ${mib(d.peakRssBytes)}`,
        `RSS < ${mib(T.downloadRssBytes)}, snapshot untouched: ${metOr(d.peakRssBytes < T.downloadRssBytes && d.snapshotUntouched && d.messageAsExpected)}`,
      ]);
    }
    const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
    blocks.push(
      [
        `**Hostile clients at ${s.label}, beside the quiet server** (measured ${h.measuredAt.slice(0, 10)}; load average ${load(h.loadAverageAtStart)} at the start, ${load(h.loadAverageAtEnd)} at the end; searches: median of ${h.searchRounds} rounds)`,
        '',
        table(['attack', 'answer', 'meta, quiet: p50 / max', 'meta during: p50 / max (asked)', 'server RSS', 'targets'], rows),
        ...(h.skipped.length ? ['', ...h.skipped.map((x) => `Not measured: ${x}.`)] : []),
      ].join('\n'),
    );
  }
  return blocks.length ? blocks.join('\n\n') : null;
}

/** One line per size with a hostile section: every target met, or those missed. */
export function hostileVerdicts(r: Results): string[] {
  return r.sizes.flatMap((s) => {
    const h = s.hostile;
    if (!h) return [];
    const T = HOSTILE_TARGETS;
    const missed: string[] = [];
    const met: string[] = [];
    const check = (ok: boolean, text: string) => (ok ? met : missed).push(text);
    const { prefix, facets } = targetedSearch(h);
    if (prefix) {
      check(prefix.ms < T.searchMs, `346-prefix query ${prefix.refused ? 'refused' : 'answered'} in ${ms(prefix.ms)} (target < ${T.searchMs} ms)`);
      check(prefix.metaMax < T.metaMs, `meta during it ${ms(prefix.metaMax)} (target < ${T.metaMs} ms)`);
    }
    if (facets) check(facets.metaMax < T.metaMs, `meta during 16 all-facet searches ${ms(facets.metaMax)} (target < ${T.metaMs} ms)`);
    if (h.exports) {
      check(h.exports.peakRssBytes < T.exportRssBytes, `${h.exports.clients} never-reading exports RSS ${mib(h.exports.peakRssBytes)} (target < ${mib(T.exportRssBytes)})`);
      check(h.exports.metaMaxMs < T.metaMs, `meta during them ${ms(h.exports.metaMaxMs)} (target < ${T.metaMs} ms)`);
    }
    if (h.pipelining) check(h.pipelining.peakRssBytes < T.pipeliningRssBytes, `${h.pipelining.connections} pipelining clients RSS ${mib(h.pipelining.peakRssBytes)} (target < ${mib(T.pipeliningRssBytes)})`);
    for (const d of h.downloads ?? []) check(d.peakRssBytes < T.downloadRssBytes && d.snapshotUntouched && d.messageAsExpected, `${d.name}: peak ${mib(d.peakRssBytes)}, snapshot ${d.snapshotUntouched ? 'untouched' : 'CHANGED'} (target < ${mib(T.downloadRssBytes)}, untouched)`);
    const load = h.loadAverageAtStart[0]?.toFixed(1) ?? 'n/a';
    return [`Hostile clients at ${s.label} (load average ${load}): ${missed.length === 0 ? 'all met' : `missed ${missed.join('; ')}`}${met.length ? `; met ${met.join('; ')}` : ''}.`];
  });
}

/** The Worker under workerd beside the Node server and nginx, same requests, same rounds (bench/lib/worker.ts). */
export function workerTable(sizes: SizeResults[]): string | null {
  const rows: string[][] = [];
  for (const s of sizes) {
    for (const x of s.worker?.sides ?? []) {
      rows.push([
        s.label,
        x.name,
        rps(x.worker.rps),
        rps(x.node.rps),
        x.nginx ? rps(x.nginx.rps) : 'n/a',
        ratio(x.worker.rps / x.node.rps),
        x.nginx ? ratio(x.worker.rps / x.nginx.rps) : 'n/a',
        [x.worker, x.node, ...(x.nginx ? [x.nginx] : [])].map((f) => ms(f.p99Ms)).join(' / '),
        x.oneAtATime ? `${pair(ms(x.oneAtATime.worker.p50Ms), ms(x.oneAtATime.worker.p99Ms))}; ${pair(ms(x.oneAtATime.node.p50Ms), ms(x.oneAtATime.node.p99Ms))}` : 'n/a',
      ]);
    }
  }
  if (rows.length === 0) return null;
  const heap = (h: IsolateMemory | null) => (h ? `${mib(h.usedBytes)} + ${mib(h.arrayBufferBytes)}` : 'n/a');
  const memory = sizes.flatMap((s) => {
    const w = s.worker;
    if (!w) return [];
    const m = w.memory;
    return [[
      s.label,
      `${fixed(w.start.listeningMs / 1000)} s / ${fixed(w.start.firstAnswerMs / 1000)} s / ${fixed(w.start.firstSearchMs / 1000)} s`,
      `${mib(m.idleRssBytes)} / ${mib(m.afterFirstSearchRssBytes)} / ${mib(m.underLoadRssBytes)}`,
      `${heap(m.heapAfterFirstSearch)} / ${heap(m.heapAfterLoad)}`,
    ]];
  });
  const bundle = sizes.find((s) => s.worker)?.worker?.bundle;
  const idle = sizes.some((s) => s.worker?.sides.some((x) => x.worker.rps === 0 && x.worker.failures === 0));
  const why = idle
    ? ['A Worker figure of 0 req/s with no failure: no answer finished within a round. One isolate interleaves its concurrent requests, so under that many connections they all finish late together; one at a time gives the cost of one.', '']
    : [];
  return [
    '**The API as a Cloudflare Worker under workerd (static assets), against the Node server and nginx, same requests, alternating rounds**',
    '',
    table(['data', 'operation', 'Worker req/s', 'Node req/s', 'nginx req/s', 'Worker/Node', 'Worker/nginx', 'p99 Worker / Node / nginx', 'one at a time, p50 / p99: Worker; Node'], rows),
    '',
    ...why,
    table(['data', 'start: listening / first answer / first search', 'workerd RSS: idle / after first search / peak under load', 'isolate, V8 heap + ArrayBuffers: after first search / after load'], memory),
    '',
    ...(bundle ? [`Worker bundle: ${(bundle.bytes / 1024).toFixed(0)} KiB, ${(bundle.gzipBytes / 1024).toFixed(0)} KiB gzip (minified, esbuild).`, ''] : []),
  ].join('\n');
}

/** The Worker's memory against the platform's 128 MB an isolate: its heap and ArrayBuffers when read, else the whole process. */
const ISOLATE_LIMIT = 128 * 1000 * 1000;

export function workerVerdicts(r: Results): string[] {
  return r.sizes.flatMap((s) => {
    const m = s.worker?.memory;
    if (!m) return [];
    const heaps = [m.heapAfterFirstSearch, m.heapAfterLoad].filter((h) => h !== null);
    if (heaps.length > 0) {
      const used = Math.max(...heaps.map((h) => h.usedBytes + (Number.isFinite(h.arrayBufferBytes) ? h.arrayBufferBytes : 0)));
      return [`Worker at ${s.label}: isolate V8 heap + ArrayBuffers ${mib(used)} at most (target < 128 MB): ${used < ISOLATE_LIMIT ? 'met' : 'missed'}.`];
    }
    return [`Worker at ${s.label}: isolate heap not read; workerd process RSS ${mib(m.underLoadRssBytes)} at peak (128 MB is the isolate's limit, the process holds more).`];
  });
}

/**
 * The figures "answers as bytes" set for the request path, at every size: ratios to nginx from the same run, search
 * over HTTP at the run's connections, the server's peak memory, and the pipelining bound.
 */
const LOOKUP_FLOORS: Record<string, number> = { detail: 0.3, 'detail, hot': 0.35, classification: 0.35, meta: 0.35, catalog: 0.25 };
const SEARCH_HTTP = { rps: 2000, p99Ms: 50 };
const RSS_LIMIT = 256 * MiB;
const PIPELINING = { rssBytes: 300 * MiB, metaMs: 100 };

export function requestPathVerdicts(r: Results): string[] {
  const out: string[] = [];
  for (const s of r.sizes) {
    const misses: string[] = [];
    const mets: string[] = [];
    for (const l of s.lookups) {
      const floor = LOOKUP_FLOORS[l.name];
      if (floor === undefined || !Number.isFinite(l.ratio)) continue;
      (l.ratio >= floor ? mets : misses).push(`${l.name} ${ratio(l.ratio)} (target ${ratio(floor)})`);
    }
    const h = s.searchHttp;
    if (h) {
      const ok = h.rps >= SEARCH_HTTP.rps && h.p99Ms < SEARCH_HTTP.p99Ms;
      (ok ? mets : misses).push(`search over HTTP ${rps(h.rps)} req/s, p99 ${ms(h.p99Ms)} (target ${rps(SEARCH_HTTP.rps)} req/s, p99 < ${SEARCH_HTTP.p99Ms} ms)`);
    }
    const u = s.searchHttpUncached;
    if (u) {
      const ok = u.rps >= SEARCH_HTTP.rps && u.p99Ms < SEARCH_HTTP.p99Ms;
      (ok ? mets : misses).push(`search over HTTP with the answer cache off ${rps(u.rps)} req/s, p99 ${ms(u.p99Ms)} (same target)`);
    }
    if (s.memory) {
      const peak = s.memory.underLoadBytes;
      (peak < RSS_LIMIT ? mets : misses).push(`server RSS ${mib(peak)} peak under load (target < ${mib(RSS_LIMIT)})`);
    }
    if (s.pipelining) {
      const p = s.pipelining;
      (p.peakRssBytes < PIPELINING.rssBytes ? mets : misses).push(`pipelining RSS ${mib(p.peakRssBytes)} (target < ${mib(PIPELINING.rssBytes)})`);
      (p.metaMaxMs < PIPELINING.metaMs && p.metaFailures === 0 ? mets : misses).push(`meta during pipelining ${ms(p.metaMaxMs)}${p.metaFailures ? `, ${p.metaFailures} failed` : ''} (target < ${PIPELINING.metaMs} ms)`);
    }
    if (mets.length + misses.length === 0) continue;
    out.push(`Request path at ${s.label}: ${misses.length === 0 ? 'all met' : `missed ${misses.join('; ')}`}${mets.length ? `; met ${mets.join('; ')}` : ''}.`);
  }
  return out;
}

/** One line per target of the issue: met or missed, and by how much. */
export function verdicts(r: Results): string[] {
  const out: string[] = [];
  const lookups = r.sizes.flatMap((s) => s.lookups.filter((l) => Number.isFinite(l.ratio)).map((l) => ({ s, l })));
  if (lookups.length > 0) {
    const worst = lookups.reduce((a, b) => (b.l.ratio < a.l.ratio ? b : a));
    const missed = lookups.filter((x) => x.l.ratio < 0.5);
    out.push(
      missed.length === 0
        ? `Lookups at least half of nginx's throughput: met (lowest ratio ${ratio(worst.l.ratio)}, ${worst.l.name} at ${worst.s.label}).`
        : `Lookups at least half of nginx's throughput: missed in ${missed.length} of ${lookups.length} cases: ${missed.map((x) => `${x.l.name} at ${x.s.label} ${ratio(x.l.ratio)} (${Math.round((1 - x.l.ratio / 0.5) * 100)}% short)`).join(', ')}.`,
    );
  } else out.push('Lookups against nginx: not measured (nginx skipped).');
  const searches = r.sizes.filter((s) => s.search?.sqlite);
  if (searches.length > 0) {
    const slower = searches.filter((s) => !(s.search!.speedupP50 > 1 && s.search!.speedupP99 > 1));
    const speedups = searches.map((s) => `${s.label} ${ratio(s.search!.speedupP50)} at p50, ${ratio(s.search!.speedupP99)} at p99`).join('; ');
    out.push(
      slower.length === 0
        ? `Search faster than SQLite FTS5 at every size: met (${speedups}).`
        : `Search faster than SQLite FTS5 at every size: missed at ${slower.map((s) => s.label).join(', ')} (${speedups}).`,
    );
    const mismatched = searches.filter((s) => s.search!.mismatches > 0);
    if (mismatched.length > 0) out.push(`Engines disagree on ${mismatched.map((s) => `${s.search!.mismatches} of ${s.search!.compared} queries at ${s.label}`).join(', ')}: see the mismatches above.`);
  } else out.push('Search against SQLite FTS5: not measured (SQLite skipped).');
  return out;
}

export function renderReport(r: Results): string {
  const s = r.settings;
  return [
    `Machine: ${r.machine.cpus} × ${r.machine.cpuModel}, ${mib(r.machine.memoryBytes)}, Node ${r.machine.node}; load average ${r.machine.loadAverageAtStart.map((x) => x.toFixed(1)).join(' ')} at the start, ${r.machine.loadAverageAtEnd.map((x) => x.toFixed(1)).join(' ')} at the end.`,
    '',
    `Run: ${r.mode}, ${fixed(r.seconds / 60)} minutes; ${s.connections} connections, ${s.rounds} rounds of ${s.roundSeconds} s after ${s.warmupSeconds} s of warm-up, medians; load by ${s.generator}; nginx ${s.nginx ?? 'skipped'}; SQLite ${s.sqlite ?? 'skipped'}; ${s.queries} search queries; records generated with seed ${s.seed}.`,
    '',
    '**Build**',
    '',
    buildTable(r.sizes),
    '',
    '**Lookups through POST /v1/query, against nginx serving the same precomputed files**',
    '',
    lookupTable(r.sizes),
    '',
    ...(floorLines(r.sizes).length > 0 ? ['Node\'s floor for meta:', '', ...floorLines(r.sizes), ''] : []),
    '**Search: ours against SQLite FTS5, same records, same queries, total and three facets**',
    '',
    searchTable(r.sizes),
    '',
    ...(kindTable(r.sizes) ? [kindTable(r.sizes)!, ''] : []),
    ...(extensionsTable(r.sizes) ? ['**Search extensions: qualifier and sorted queries (engine, ours against SQLite FTS5), and export**', '', extensionsTable(r.sizes)!, ''] : []),
    '**Memory (resident)**',
    '',
    memoryTable(r.sizes),
    '',
    ...(pipeliningTable(r.sizes) ? [pipeliningTable(r.sizes)!, ''] : []),
    ...(hostileTable(r.sizes) ? [hostileTable(r.sizes)!, ''] : []),
    ...(allCoresTable(r.sizes) ? [allCoresTable(r.sizes)!, ''] : []),
    ...(workerTable(r.sizes) ? [workerTable(r.sizes)!, ''] : []),
    ...(r.predicates ? ['**Predicates read from 510(k) summaries, against FDA\'s decision summaries**', '', predicatesTable(r.predicates), ''] : []),
    ...requestPathVerdicts(r).map((v) => `- ${v}`),
    ...verdicts(r).map((v) => `- ${v}`),
    ...workerVerdicts(r).map((v) => `- ${v}`),
    ...hostileVerdicts(r).map((v) => `- ${v}`),
    ...extensionVerdicts(r).map((v) => `- ${v}`),
    ...(r.notes.length > 0 ? ['', ...r.notes.map((n) => `- Note: ${n}`)] : []),
  ].join('\n');
}

/** The extractor's figures: one row per reading (texts, parts, every number, PDFs). */
function predicatesTable(p: NonNullable<Results['predicates']>): string {
  const row = (name: string, x: { precision: number; recall: number; ceiling: number; correct: number; foundPairs: number; truePairs: number }, rate: string) =>
    `| ${name} | ${x.precision.toFixed(3)} | ${x.recall.toFixed(3)} | ${x.ceiling.toFixed(3)} | ${x.correct} / ${x.foundPairs} of ${x.truePairs} | ${rate} |`;
  return [
    `${p.devices} summaries; targets: precision 0.92 or more with recall 0.86 or more, PDFs within 0.05 of the texts.`,
    '',
    '| reading | precision | recall | ceiling | right / found of true | summaries/s |',
    '|---|---|---|---|---|---|',
    row('texts', p.texts, p.texts.perSecond.toFixed(0)),
    row('texts, first two of every three', p.part1, ''),
    row('texts, the third of every three', p.part2, ''),
    row('every number (baseline)', p.everyNumber, ''),
    ...(p.pdfs ? [row('the same texts as PDFs (pdf.js)', p.pdfs, p.pdfs.perSecond.toFixed(0))] : []),
  ].join('\n');
}
