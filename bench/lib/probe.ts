import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { killAll } from './procs.ts';

/**
 * The start every probe script shares (one section of `npm run bench` over one built snapshot): its child processes
 * killed on exit and on a signal, a log with seconds since the start, and the snapshot's folder, manifest and label
 * (its record count, as the bench's tables name a size).
 */
export async function startProbe(snapshot: string): Promise<{
  started: number;
  log: (line: string) => void;
  dir: string;
  manifest: Manifest;
  label: string;
}> {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const dir = await realpath(snapshot);
  const manifest = Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
  return { started, log, dir, manifest, label: manifest.counts.records.toLocaleString('en-US') };
}
