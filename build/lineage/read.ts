import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEVICE_NUMBER, EdgeSourceFile } from '../../src/contract/index.ts';
import { parseCsv } from './csv.ts';

/**
 * Edge inputs: a folder holding `predicates.csv` (header `device,predicate`) and `source.json`
 * (`{"source", "kind", "report"?}`); a `predicate` source may name a report (`device,status,predicates,reason`,
 * status `read`, `no-text`, `unreadable` or `missing`) that says which devices' texts it read.
 */
export const EDGE_FILE = 'predicates.csv';
export const EDGE_SOURCE_FILE = 'source.json';
export const REPORT_STATUSES = ['read', 'no-text', 'unreadable', 'missing'] as const;

export type EdgeRow = { device: string; predicate: string };
export type EdgeInput = {
  /** The folder, as given. */
  folder: string;
  source: string;
  kind: 'predicate' | 'named';
  sha256: string;
  rows: number;
  /** Rows with two well-formed numbers, in file order (repeats included). */
  edges: EdgeRow[];
  /** Rows left out, by reason. */
  skipped: Record<string, number>;
  /** Devices whose text the report marks `read`; null without a report. */
  read: Set<string> | null;
};

/** True when `dir` is an edge input folder (it holds source.json and predicates.csv). */
export async function isEdgeFolder(dir: string): Promise<boolean> {
  const [a, b] = await Promise.all([stat(join(dir, EDGE_SOURCE_FILE)).catch(() => null), stat(join(dir, EDGE_FILE)).catch(() => null)]);
  return Boolean(a?.isFile() && b?.isFile());
}

/** Every edge folder at or below `dir`, in path order. */
export async function findEdgeFolders(dir: string): Promise<string[]> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) return [];
  if (await isEdgeFolder(dir)) return [dir];
  const out: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (name.startsWith('.')) continue;
    out.push(...(await findEdgeFolders(join(dir, name))));
  }
  return out;
}

const normalize = (value: string): string => value.trim().toUpperCase();

/** Reads one edge folder; a malformed source.json, header or report is an error naming the file. */
export async function readEdgeFolder(folder: string): Promise<EdgeInput> {
  const sourcePath = join(folder, EDGE_SOURCE_FILE);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(sourcePath, 'utf8'));
  } catch (err) {
    throw new Error(`${sourcePath}: not JSON (${(err as Error).message})`);
  }
  const parsed = EdgeSourceFile.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new Error(`${sourcePath}: ${first?.path.join('.') || 'the file'} ${first?.message ?? 'is invalid'}`);
  }
  const meta = parsed.data;
  if (meta.report !== undefined && meta.kind !== 'predicate') throw new Error(`${sourcePath}: report is for sources of kind "predicate"`);
  const edgePath = join(folder, EDGE_FILE);
  const bytes = await readFile(edgePath);
  const rows = parseCsv(bytes.toString('utf8'), edgePath);
  const header = rows.shift();
  if (!header || header.join(',') !== 'device,predicate') throw new Error(`${edgePath}: the first line must be "device,predicate"`);
  const edges: EdgeRow[] = [];
  const skipped: Record<string, number> = {};
  const skip = (reason: string) => (skipped[reason] = (skipped[reason] ?? 0) + 1);
  for (const row of rows) {
    if (row.length !== 2) {
      skip('not two columns');
      continue;
    }
    const device = normalize(row[0] as string);
    const predicate = normalize(row[1] as string);
    if (!DEVICE_NUMBER.test(device) || !DEVICE_NUMBER.test(predicate)) skip('not a K or DEN number');
    else edges.push({ device, predicate });
  }
  return {
    folder,
    source: meta.source,
    kind: meta.kind,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows: rows.length,
    edges,
    skipped,
    read: meta.report === undefined ? null : await readReport(join(folder, meta.report)),
  };
}

/** The devices a report marks `read`. */
async function readReport(path: string): Promise<Set<string>> {
  const rows = parseCsv(await readFile(path, 'utf8').catch((err: Error) => Promise.reject(new Error(`${path}: ${err.message}`))), path);
  const header = rows.shift();
  if (!header || header.join(',') !== 'device,status,predicates,reason') throw new Error(`${path}: the first line must be "device,status,predicates,reason"`);
  const read = new Set<string>();
  rows.forEach((row, i) => {
    const device = normalize(row[0] ?? '');
    const status = row[1] ?? '';
    if (row.length !== 4 || !DEVICE_NUMBER.test(device) || !(REPORT_STATUSES as readonly string[]).includes(status)) {
      throw new Error(`${path}: line ${i + 2} must be a K or DEN number, a status (${REPORT_STATUSES.join(', ')}), predicates and a reason`);
    }
    if (status === 'read') read.add(device);
  });
  return read;
}
