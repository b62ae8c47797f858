import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProductCodeShard, RecordShard, type ClearanceRecord } from '../../src/contract/index.ts';

export type Truth = { records: Map<string, ClearanceRecord>; deviceTypes: Map<string, string | null> };

/** Every record and device type of a snapshot, read straight from its shards: what the page must agree with. */
export async function readTruth(snapshotDir: string): Promise<Truth> {
  const records = new Map<string, ClearanceRecord>();
  for (const name of await readdir(join(snapshotDir, 'records'))) {
    if (name === 'index.json' || !name.endsWith('.json')) continue;
    for (const r of RecordShard.parse(JSON.parse(await readFile(join(snapshotDir, 'records', name), 'utf8')))) records.set(r.kNumber, r);
  }
  const deviceTypes = new Map<string, string | null>();
  for (const name of await readdir(join(snapshotDir, 'product-codes'))) {
    if (name === 'index.json' || !name.endsWith('.json')) continue;
    for (const e of ProductCodeShard.parse(JSON.parse(await readFile(join(snapshotDir, 'product-codes', name), 'utf8')))) {
      deviceTypes.set(e.productCode, e.deviceType);
    }
  }
  return { records, deviceTypes };
}

const words = (text: string): string[] =>
  text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * The clearances one plain query word finds under the contract's rule (section 6): some word of the device name,
 * applicant, K number, product code or the code's device type starts with it. A plain scan, for comparison.
 */
export function matchesOf(truth: Truth, word: string): ClearanceRecord[] {
  const q = word.toLowerCase();
  return [...truth.records.values()].filter((r) => {
    const text = [r.deviceName, r.applicant, r.kNumber, r.productCode, r.productCode ? truth.deviceTypes.get(r.productCode) : null]
      .filter((s): s is string => typeof s === 'string')
      .join(' ');
    return words(text).some((w) => w.startsWith(q));
  });
}
