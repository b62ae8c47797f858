import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseQuery } from '../../src/search/grammar.ts';
import { queryWords } from '../../src/search/tokenize.ts';
import type { Answer, EngineName } from './engine.ts';
import { lastJsonLine, LineChild, runToEnd, startTsx, stop } from './procs.ts';
import type { Query } from './queries.ts';
import { median, percentile } from './stats.ts';

/**
 * Our search engine against SQLite FTS5 on the same records and the same queries, each engine loaded once in its own
 * process. Rounds alternate between the two, so both see the machine in the same state; each round's p50 and p99 are
 * taken, and the median round is reported. Every query's total and facets are compared between the engines.
 */
export type EngineFigures = {
  loadMs: number;
  rssBytes: number;
  p50Ms: number;
  p99Ms: number;
  rounds: { p50Ms: number; p99Ms: number }[];
  byKind: Record<string, number>;
  /** p50 and p99 over every sample of each group of kinds (the part of a kind before its colon). */
  byGroup?: Record<string, { p50Ms: number; p99Ms: number }>;
};

export type Mismatch = { kind: string; query: Query['input']; what: string; ours: unknown; sqlite: unknown };

export type SearchFigures = {
  queries: number;
  ours: EngineFigures;
  sqlite: (EngineFigures & { buildSeconds: number; databaseBytes: number }) | null;
  /** SQLite's latency over ours: above 1, ours is faster. */
  speedupP50: number;
  speedupP99: number;
  compared: number;
  mismatches: number;
  mismatchExamples: Mismatch[];
  skipped: string | null;
};

type Options = {
  root: string;
  snapshotDir: string;
  snapshotId: string;
  workDir: string;
  tmp: string;
  queries: Query[];
  rounds: number;
  roundTimeoutMs: number;
  buildTimeoutMs: number;
  log: (line: string) => void;
};

/** Whether better-sqlite3 loads here; the reason when it does not. */
export async function sqliteProblem(): Promise<string | null> {
  try {
    (await import('./engine-sqlite.ts')).loadSqlite();
    return null;
  } catch (err) {
    return `better-sqlite3 could not be loaded (${(err as Error).message.split('\n')[0]}); run \`npm ci\` (its addon builds with python3, make and a C++ compiler). The SQLite column is skipped.`;
  }
}

/** The database for a snapshot, built once and kept while the snapshot and the database code are unchanged. */
async function database(o: Options): Promise<{ path: string; buildSeconds: number; bytes: number }> {
  const code = createHash('sha256').update(await readFile(join(o.root, 'bench/lib/engine-sqlite.ts'))).digest('hex').slice(0, 8);
  const dir = join(o.workDir, 'sqlite');
  const name = `${o.snapshotId}-${code}.db`;
  const path = join(dir, name);
  const sidecar = `${path}.json`;
  const known = await readFile(sidecar, 'utf8').then((t) => JSON.parse(t) as { seconds: number; bytes: number }, () => null);
  if (known && (await stat(path).catch(() => null))) return { path, buildSeconds: known.seconds, bytes: known.bytes };
  await mkdir(dir, { recursive: true });
  // Databases of snapshots no longer in the cache (their build inputs changed), or of older database code, go.
  const live = new Set<string>([o.snapshotId]);
  const snapshots = join(o.workDir, 'snapshots');
  for (const entry of await readdir(snapshots).catch(() => [])) {
    const id = await readFile(join(snapshots, entry, 'build.json'), 'utf8').then((t) => (JSON.parse(t) as { snapshotId: string }).snapshotId, () => null);
    if (id) live.add(id);
  }
  for (const other of await readdir(dir)) {
    const id = other.split('-')[0]!;
    if (!live.has(id) || (id === o.snapshotId && !other.startsWith(name))) await rm(join(dir, other), { force: true });
  }
  o.log('building the SQLite FTS5 database');
  const child = startTsx(join(o.root, 'bench/lib/sqlite-build-child.ts'), [o.snapshotDir, path]);
  const built = lastJsonLine<{ seconds: number; bytes: number }>(await runToEnd(child, o.buildTimeoutMs, 'the SQLite build'));
  await writeFile(sidecar, `${JSON.stringify(built)}\n`);
  return { path, buildSeconds: built.seconds, bytes: built.bytes };
}

function startEngine(o: Options, name: EngineName, queriesFile: string, db?: string): LineChild {
  const child = startTsx(join(o.root, 'bench/lib/search-child.ts'), [name, o.snapshotDir, queriesFile, ...(db ? [db] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new LineChild(child, `the ${name} search process`);
}

function summarize(info: { loadMs: number; rssBytes: number }, rounds: number[][], queries: Query[]): EngineFigures {
  const perRound = rounds.map((ms) => ({ p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) }));
  const byKindSamples = new Map<string, number[]>();
  const byGroupSamples = new Map<string, number[]>();
  for (const ms of rounds) {
    ms.forEach((x, i) => {
      const kind = queries[i]!.kind;
      if (!byKindSamples.has(kind)) byKindSamples.set(kind, []);
      byKindSamples.get(kind)!.push(x);
      const group = kind.split(':')[0]!;
      if (!byGroupSamples.has(group)) byGroupSamples.set(group, []);
      byGroupSamples.get(group)!.push(x);
    });
  }
  return {
    loadMs: info.loadMs,
    rssBytes: info.rssBytes,
    p50Ms: median(perRound.map((r) => r.p50Ms)),
    p99Ms: median(perRound.map((r) => r.p99Ms)),
    rounds: perRound,
    byKind: Object.fromEntries([...byKindSamples].sort().map(([k, xs]) => [k, percentile(xs, 50)])),
    byGroup: Object.fromEntries([...byGroupSamples].sort().map(([g, xs]) => [g, { p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) }])),
  };
}

/** Whether both engines order this request the same way: no words to score (bm25 is not our score), or a sort. */
function pageIsComparable(input: Query['input']): boolean {
  if (input.sort !== undefined && input.sort !== 'relevance') return true;
  const parsed = parseQuery(input.query);
  if (parsed.plain) return queryWords(input.query).length === 0;
  return !parsed.clauses.some((c) => c.some((t) => t.kind !== 'field'));
}

function compare(queries: Query[], ours: Answer[], sqlite: Answer[]): { mismatches: number; examples: Mismatch[] } {
  let mismatches = 0;
  const examples: Mismatch[] = [];
  queries.forEach((q, i) => {
    const a = ours[i]!;
    const b = sqlite[i]!;
    let what: string | null = null;
    if (a.total !== b.total) what = 'total';
    else if (JSON.stringify(a.facets) !== JSON.stringify(b.facets)) what = 'facets';
    // Without query words, or with a sort other than relevance, both order by the same keys: the pages must agree too.
    else if (pageIsComparable(q.input) && JSON.stringify(a.kNumbers) !== JSON.stringify(b.kNumbers)) what = 'page';
    if (what === null) return;
    mismatches++;
    if (examples.length < 10) {
      const pick = (x: Answer) => (what === 'total' ? x.total : what === 'facets' ? x.facets : x.kNumbers);
      examples.push({ kind: q.kind, query: q.input, what, ours: pick(a), sqlite: pick(b) });
    }
  });
  return { mismatches, examples };
}

export async function compareSearch(o: Options): Promise<SearchFigures> {
  const queriesFile = join(o.tmp, 'queries.json');
  await writeFile(queriesFile, JSON.stringify(o.queries));
  const problem = await sqliteProblem();
  const db = problem ? null : await database(o);

  const ours = startEngine(o, 'ours', queriesFile);
  const sqlite = db ? startEngine(o, 'sqlite', queriesFile, db.path) : null;
  const engines = [ours, ...(sqlite ? [sqlite] : [])];
  try {
    type Info = { loadMs: number; rssBytes: number };
    type Round = { ms: number[]; rssBytes: number };
    const infos = await Promise.all(engines.map((e) => e.request<Info>({ cmd: 'info' }, o.roundTimeoutMs)));
    o.log(`search: ${o.queries.length} queries, a warm-up round, then ${o.rounds} rounds per engine`);
    for (const e of engines) await e.request<Round>({ cmd: 'round' }, o.roundTimeoutMs);
    const rounds: number[][][] = engines.map(() => []);
    for (let r = 0; r < o.rounds; r++) {
      // Alternate which engine goes first, so neither always runs right after the other.
      const order = r % 2 === 0 ? engines.map((_, i) => i) : engines.map((_, i) => i).reverse();
      for (const i of order) rounds[i]!.push((await engines[i]!.request<Round>({ cmd: 'round' }, o.roundTimeoutMs)).ms);
    }
    const oursFigures = summarize(infos[0]!, rounds[0]!, o.queries);
    let sqliteFigures: SearchFigures['sqlite'] = null;
    let compared = 0;
    let mismatches = 0;
    let examples: Mismatch[] = [];
    if (sqlite && db) {
      sqliteFigures = { ...summarize(infos[1]!, rounds[1]!, o.queries), buildSeconds: db.buildSeconds, databaseBytes: db.bytes };
      type Answers = { answers: Answer[] };
      const [a, b] = await Promise.all([ours.request<Answers>({ cmd: 'answers' }, o.roundTimeoutMs), sqlite.request<Answers>({ cmd: 'answers' }, o.roundTimeoutMs)]);
      const result = compare(o.queries, a.answers, b.answers);
      compared = o.queries.length;
      mismatches = result.mismatches;
      examples = result.examples;
    }
    return {
      queries: o.queries.length,
      ours: oursFigures,
      sqlite: sqliteFigures,
      speedupP50: sqliteFigures ? sqliteFigures.p50Ms / oursFigures.p50Ms : Number.NaN,
      speedupP99: sqliteFigures ? sqliteFigures.p99Ms / oursFigures.p99Ms : Number.NaN,
      compared,
      mismatches,
      mismatchExamples: examples,
      skipped: problem,
    };
  } finally {
    for (const e of engines) {
      e.child.stdin?.end();
      await stop(e.child, 5000);
    }
  }
}
