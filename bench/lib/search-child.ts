/**
 * One search engine in its own process, loaded once, answering the parent's requests line by line:
 *   {"cmd":"info"}    → load time and resident memory after loading
 *   {"cmd":"round"}   → every query once, the milliseconds of each
 *   {"cmd":"answers"} → every query's total, facets and page, to compare the engines
 *
 *   node --import tsx bench/lib/search-child.ts ours|sqlite SNAPSHOT_DIR QUERIES.json [DATABASE]
 */
import { readFileSync } from 'node:fs';
import type { Query } from './queries.ts';
import type { EngineName, SearchEngine } from './engine.ts';
import { serveLines } from './procs.ts';

const [name, snapshotDir, queriesFile, database] = process.argv.slice(2) as [EngineName, string, string, string | undefined];
const queries = JSON.parse(readFileSync(queriesFile, 'utf8')) as Query[];

const started = performance.now();
let engine: SearchEngine;
if (name === 'ours') {
  engine = await (await import('./engine-ours.ts')).openOurs(snapshotDir);
} else {
  if (!database) throw new Error('Expected the path of the SQLite database');
  engine = (await import('./engine-sqlite.ts')).openSqlite(database);
}
const loadMs = performance.now() - started;

serveLines((message) => {
  const { cmd } = message as { cmd: string };
  if (cmd === 'info') return { loadMs, rssBytes: process.memoryUsage.rss() };
  if (cmd === 'round') {
    const ms = new Array<number>(queries.length);
    for (let i = 0; i < queries.length; i++) {
      const t = performance.now();
      engine.run(queries[i]!.input);
      ms[i] = performance.now() - t;
    }
    return { ms, rssBytes: process.memoryUsage.rss() };
  }
  if (cmd === 'answers') return { answers: queries.map((q) => engine.run(q.input)) };
  throw new Error(`unknown command ${cmd}`);
});
