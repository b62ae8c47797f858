import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { carryHistory, HISTORY_FILE_MAX_BYTES, HISTORY_MAX_BYTES } from '../../build/history/history.ts';
import type { PreviousSnapshot } from '../../build/changes/previous.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { HISTORY_RECORDS_PATH } from '../../src/contract/history.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** A previous snapshot whose manifest lists `files` (path and size); reads are counted, and give an empty month. */
function previousWith(files: { path: string; bytes: number }[]) {
  const reads: string[] = [];
  const previous = {
    dir: '/nowhere',
    manifest: { generatedAt: '2026-01-01T00:00:00.000Z', files: files.map((f) => ({ ...f, sha256: '0'.repeat(64) })) },
    changes: null,
    readShard: async () => [],
    readFile: async (path: string) => {
      reads.push(path);
      return new TextEncoder().encode(path.endsWith('.ndjson') ? '{"at":"2025-12-01T00:00:00.000Z","changes":[]}\n' : '{}');
    },
  } as unknown as PreviousSnapshot;
  return { previous, reads };
}

const carry = (previous: PreviousSnapshot) => carryHistory({ previous, comparison: null, records: [], generatedAt: '2026-01-02T00:00:00.000Z', keepDays: 3650 });

it('a history file larger than its bound is dropped with its reason, and not a byte of it is read', async () => {
  const { previous, reads } = previousWith([
    { path: HISTORY_RECORDS_PATH, bytes: 120 * 1024 * 1024 },
    { path: 'history/changes/2025-12.ndjson', bytes: 100 },
  ]);
  const history = await carry(previous);
  expect(reads).toEqual(['history/changes/2025-12.ndjson']);
  expect(history.index.dropped.join('\n')).toContain(`${HISTORY_RECORDS_PATH} did not verify (it is ${120 * 1024 * 1024} bytes, more than the ${HISTORY_FILE_MAX_BYTES} a history file may be)`);
});

it('the history\'s files together are bounded too: months past the sum are dropped unread', async () => {
  const month = HISTORY_FILE_MAX_BYTES;
  const months = Array.from({ length: 6 }, (_, i) => ({ path: `history/changes/2025-0${i + 1}.ndjson`, bytes: month }));
  const { previous, reads } = previousWith(months);
  const history = await carry(previous);
  const fit = Math.floor(HISTORY_MAX_BYTES / month);
  expect(reads).toEqual(months.slice(0, fit).map((m) => m.path));
  expect(history.index.dropped.filter((d) => /all of them may hold/.test(d))).toHaveLength(months.length - fit);
});

it('a writer settles its writes in flight, failed or not, before its folder is removed', async () => {
  const dir = await testTempDir('device-510k-settle-');
  const writer = new SnapshotWriter(join(dir, 'staging'), 2);
  for (let i = 0; i < 50; i++) writer.writeBytes(`d${i % 5}/f${i}.bin`, new Uint8Array(1024).fill(i));
  await writer.settle();
  const written = (await readdir(join(dir, 'staging'), { recursive: true })).filter((p) => p.endsWith('.bin'));
  expect(written).toHaveLength(50);
  // Nothing is left in flight: removing the folder now meets no write.
  await rm(dir, { recursive: true, force: true });
});
