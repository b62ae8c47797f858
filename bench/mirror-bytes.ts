/**
 * What a first mirror of a snapshot moves over the network from each kind of origin: the Node server (which compresses
 * as it sends) and a static host with exactly docs/deploy.md's nginx configuration (precompressed copies only).
 *
 *   npx tsx bench/mirror-bytes.ts --snapshot DIR
 *
 * Each origin is mirrored into an empty folder with `npm run mirror`'s code; the bytes on the wire (bodies as sent)
 * and the seconds are printed, with their ratio. Not a test: figures are printed, never asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMirror } from '../build/mirror/run.ts';
import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { createApp } from '../src/server/app.ts';
import { startDocumentedNginx } from './lib/static-hosting.ts';

const USAGE = `Usage: npx tsx bench/mirror-bytes.ts --snapshot DIR

Mirrors DIR from the Node server and from nginx configured as docs/deploy.md shows, each into an empty folder,
and prints the bytes each moved on the wire.

  --snapshot DIR   the snapshot both origins serve (required)`;

async function main(): Promise<void> {
  const values = parseCommandLine('mirror-bytes', USAGE, { snapshot: { type: 'string' } });
  if (!values.snapshot) throw new UsageError('--snapshot is required');
  const app = await createApp({ snapshotPath: values.snapshot, publicDir: null, syncStatePath: null, pollMs: 0, watch: false, logger: { request: () => {}, info: () => {}, error: () => {} } });
  const server = await app.listen(0, '127.0.0.1');
  const nginx = await startDocumentedNginx(values.snapshot);
  const work = await mkdtemp(join(tmpdir(), 'device-510k-mirror-bytes-'));
  const rows: { origin: string; wireBytes: number; written: number; files: number; seconds: number }[] = [];
  try {
    for (const [origin, from] of [
      ['node server', `http://127.0.0.1:${server.port}/snapshot`],
      ["nginx, docs/deploy.md's configuration", `${nginx.url}/snapshot`],
    ] as const) {
      const started = performance.now();
      const result = await runMirror({ from, to: join(work, origin.replace(/\W+/g, '-'), 'snapshot'), log: () => {} });
      if (result.outcome !== 'updated') throw new Error(`the mirror from ${origin} did not copy the snapshot`);
      rows.push({ origin, wireBytes: result.wireBytes, written: result.writtenBytes, files: result.counts.origin, seconds: (performance.now() - started) / 1000 });
    }
  } finally {
    await nginx.close();
    await app.close({ graceMs: 1000 });
    await rm(work, { recursive: true, force: true });
  }
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`snapshot ${values.snapshot}\n`);
  console.log('origin                                    on the wire     written   files downloaded   seconds');
  for (const r of rows) console.log(`${r.origin.padEnd(40)} ${mb(r.wireBytes).padStart(12)} ${mb(r.written).padStart(11)} ${String(r.files).padStart(18)} ${r.seconds.toFixed(1).padStart(9)}`);
  console.log(`\nstatic host / server, bytes on the wire: ${(rows[1]!.wireBytes / rows[0]!.wireBytes).toFixed(2)}`);
}

runCommand('mirror-bytes', main);
