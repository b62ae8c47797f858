import { loadavg } from 'node:os';
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { downloadBombsProblem, runDownloadBombs, type DownloadRow } from './hostile-download.ts';
import { metaLatency, neverReadingExports, type NeverReadingFigures } from './hostile-export.ts';
import { FACETS_16, HOSTILE_OPENFDA_CASES, HOSTILE_SEARCH_CASES, medianRound, PREFIX_346, startMetaChild, warmSearch, type HostileSearchRow } from './hostile-search.ts';
import { paddedQueryRequest, pipeliningAttack, type PipeliningFigures } from './pipelining.ts';
import { memoryOf, stop } from './procs.ts';
import { startServer } from './server.ts';
import { MiB } from './stats.ts';

/**
 * The hostile section of `npm run bench`: what a client acting as an attacker can make the server (and the mirror and
 * the sync) do, beside the same figures on the quiet server. Each part runs against a server of its own, started as
 * `npm start` runs it, so that one part's memory is not read as another's.
 */
export type HostileFigures = {
  measuredAt: string;
  loadAverageAtStart: number[];
  loadAverageAtEnd: number[];
  /** meta on the quiet server with the index loaded, before any hostile search: p50 and slowest of 20. */
  quietMeta: { p50Ms: number; maxMs: number };
  /** Each case of bench/lib/hostile-search.ts, the median of its rounds by time. */
  search: HostileSearchRow[];
  searchRounds: number;
  exports: NeverReadingFigures | null;
  /** 300 connections × 36 pipelined requests with 64 KiB bodies, never read; the RSS before and the quiet meta beside. */
  pipelining: (PipeliningFigures & { rssBeforeBytes: number; requestsPerConnection: number; bodyBytes: number; quietMetaMaxMs: number }) | null;
  downloads: DownloadRow[] | null;
  /** What was not measured, and why. */
  skipped: string[];
};

/** The targets for the section. */
export const HOSTILE_TARGETS = {
  searchMs: 100,
  metaMs: 100,
  exportRssBytes: 400 * MiB,
  pipeliningRssBytes: 400 * MiB,
  downloadRssBytes: 300 * MiB,
} as const;

export type HostileOptions = {
  root: string;
  snapshotPath: string;
  /** The directory the snapshot link points at: the mirror's origin serves it. */
  snapshotDir: string;
  tmp: string;
  log: (line: string) => void;
  /** Rounds of each search case (3). */
  rounds?: number;
  exportClients?: number;
  exportHoldMs?: number;
  pipeliningConnections?: number;
  pipeliningSeconds?: number;
  bombBytes?: number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

export async function measureHostile(o: HostileOptions): Promise<HostileFigures> {
  const figures: HostileFigures = {
    measuredAt: new Date().toISOString(),
    loadAverageAtStart: loadavg(),
    loadAverageAtEnd: [],
    quietMeta: { p50Ms: Number.NaN, maxMs: Number.NaN },
    search: [],
    searchRounds: o.rounds ?? 3,
    exports: null,
    pipelining: null,
    downloads: null,
    skipped: [],
  };
  const serverTmp = () => mkdtemp(join(o.tmp, 'hostile-'));

  o.log('hostile: searches');
  let server = await startServer(o.root, o.snapshotPath, await serverTmp());
  try {
    await warmSearch(server.url);
    const quiet: number[] = [];
    for (let i = 0; i < 20; i++) quiet.push(await metaLatency(server.url));
    figures.quietMeta = { p50Ms: median(quiet), maxMs: Math.max(...quiet) };
    // meta is asked from a process of its own: this one's work on the cases' large answers (decoding, parsing) would
    // otherwise delay the meta figures, which are the server's.
    const metaChild = startMetaChild();
    try {
      for (const c of [...HOSTILE_SEARCH_CASES, ...HOSTILE_OPENFDA_CASES]) {
        o.log(`hostile: ${c.name}`);
        figures.search.push(await medianRound(server.url, c, figures.searchRounds, server.pid, metaChild));
      }
    } finally {
      await stop(metaChild.child, 2000);
    }
  } finally {
    await server.stop();
  }

  const clients = o.exportClients ?? 40;
  o.log(`hostile: ${clients} exports that never read`);
  server = await startServer(o.root, o.snapshotPath, await serverTmp());
  try {
    // The search index loaded first, as on a server that has been answering.
    await fetch(`${server.url}/v1/export?limit=1&format=ndjson`).then((r) => r.text());
    figures.exports = await neverReadingExports(server, clients, o.exportHoldMs ?? 8000);
  } finally {
    await server.stop();
  }

  const connections = o.pipeliningConnections ?? 300;
  const perConnection = 36;
  const bodyBytes = 64 * 1024;
  o.log(`hostile: ${connections} pipelining clients with ${bodyBytes / 1024} KiB bodies`);
  server = await startServer(o.root, o.snapshotPath, await serverTmp());
  try {
    const request = paddedQueryRequest(bodyBytes);
    const quiet = await pipeliningAttack(server.url, server.pid, { connections: 0, seconds: 1, request, perConnection: 1, freshMeta: true });
    const before = memoryOf(server.pid)?.rss ?? Number.NaN;
    const attack = await pipeliningAttack(server.url, server.pid, { connections, seconds: o.pipeliningSeconds ?? 8, request, perConnection, freshMeta: true });
    figures.pipelining = { ...attack, rssBeforeBytes: before, requestsPerConnection: perConnection, bodyBytes, quietMetaMaxMs: quiet.metaMaxMs };
  } finally {
    await server.stop();
  }

  const problem = downloadBombsProblem();
  if (problem) figures.skipped.push(problem);
  else {
    o.log('hostile: the mirror and the sync against a gzip bomb and a zip bomb');
    figures.downloads = await runDownloadBombs({ snapshotDir: o.snapshotDir, bombBytes: o.bombBytes ?? 1536 * MiB, log: (line) => o.log(`hostile: ${line.trim()}`) });
  }
  figures.loadAverageAtEnd = loadavg();
  return figures;
}

/** The cases with a target of their own. */
export const targetedSearch = (f: HostileFigures) => ({
  prefix: f.search.find((r) => r.name === PREFIX_346) ?? null,
  facets: f.search.find((r) => r.name === FACETS_16) ?? null,
});
