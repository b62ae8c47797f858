/**
 * Builds the SQLite FTS5 database of one snapshot in its own process; prints one JSON line: seconds and bytes.
 *
 *   node --import tsx bench/lib/sqlite-build-child.ts SNAPSHOT_DIR DATABASE
 */
import { stat } from 'node:fs/promises';
import { buildSqlite } from './engine-sqlite.ts';

const [snapshotDir, database] = process.argv.slice(2);
if (!snapshotDir || !database) throw new Error('Expected a snapshot directory and a database path');
const started = performance.now();
await buildSqlite(snapshotDir, database);
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, bytes: (await stat(database)).size })}\n`);
