import type { PredicateFigures } from './predicates.ts';
import type { SearchFigures } from './compare-search.ts';
import type { ExtensionFigures } from './extensions.ts';
import type { HostileFigures } from './hostile.ts';
import type { LookupFigures, SideFigures } from './measure-lookups.ts';
import type { PipeliningFigures } from './pipelining.ts';
import type { PreparedSnapshot } from './snapshots.ts';
import type { WorkerFigures } from './worker.ts';

/** What one run measured: `bench/results.json`, the table and the plot are all drawn from this. */
export type SizeResults = {
  label: string;
  records: number;
  snapshotId: string;
  build: PreparedSnapshot['build'];
  lookups: LookupFigures[];
  /** device-510k.search through POST /v1/query, with the same queries (no nginx counterpart: it has no search). */
  searchHttp: SideFigures | null;
  /**
   * The same with the server's search answer cache off (ANSWER_CACHE_BYTES=0): every request runs the engine and reads
   * its records, as a query nobody asked before does. The bench's 400 queries repeat, so with the cache on (the
   * default, `searchHttp`) nearly every request after the warm-up is answered from it.
   */
  searchHttpUncached?: SideFigures | null;
  search: SearchFigures | null;
  memory: {
    /** The server's resident memory once it answers /healthz, before any request. */
    afterStartBytes: number;
    /** After the first search (the search index is loaded on first use). */
    afterFirstSearchBytes: number;
    /** The highest resident memory sampled while the load rounds ran. */
    underLoadBytes: number;
  } | null;
  /** Clients that pipeline hundreds of requests and never read, against the one-process server. */
  pipelining?: PipeliningFigures | null;
  /** Our server with one worker per core (WORKERS=auto) against nginx with one worker per core. */
  allCores?: { workers: number; lookups: LookupFigures[]; searchHttp: SideFigures | null } | null;
  /** The API as a Cloudflare Worker under workerd, side by side with the Node server and nginx (bench/lib/worker.ts). */
  worker?: WorkerFigures | null;
  /** Qualifier and sorted queries against SQLite FTS5, and the export's throughput (bench/lib/extensions.ts). */
  extensions?: ExtensionFigures | null;
  /** Clients acting as attackers, beside the quiet figures (bench/lib/hostile.ts); measured at 1,000,000 records. */
  hostile?: HostileFigures | null;
};

export type Results = {
  schemaVersion: 1;
  mode: 'quick' | 'full';
  startedAt: string;
  seconds: number;
  machine: { cpus: number; cpuModel: string; memoryBytes: number; node: string; platform: string; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  settings: {
    connections: number;
    roundSeconds: number;
    warmupSeconds: number;
    rounds: number;
    queries: number;
    seed: string;
    generator: string;
    nginx: string | null;
    sqlite: string | null;
  };
  notes: string[];
  sizes: SizeResults[];
  /**
   * The lab notes of past runs (profiles, tables, side-by-side rounds), under the CHANGELOG's heading they belong to:
   * the changelog keeps one line per change. A new run carries them over.
   */
  labNotes?: LabNote[];
  /** The predicate extractor on the 510(k) summaries (bench/lib/predicates.ts); absent when not measured. */
  predicates?: Omit<PredicateFigures, 'disagreements'>;
};

export type LabNote = { section: string; text: string };
