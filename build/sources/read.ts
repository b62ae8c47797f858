import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { unzipSync } from 'fflate';
import { detectKind, type SourceKind } from './parse.ts';

/** One logical source file: a plain file, or one entry of a zip. */
export type SourceInput = { name: string; kind: SourceKind; bytes: Uint8Array };

export type ReadSources = { inputs: SourceInput[]; sourceRevision: string; inputBytes: number };

const SOURCE_FILE = /\.(txt|json|zip)$/i;

/**
 * Reads the sources in precedence order. A directory stands for its source files in path order; a zip for its
 * entries in name order. The revision is a sha256 over the bytes of the inputs as given (zips as zipped).
 */
export async function readSources(paths: readonly string[]): Promise<ReadSources> {
  const files: string[] = [];
  for (const p of paths) files.push(...(await expand(p)));
  if (files.length === 0) throw new Error('no source files: give --source a .txt, .json or .zip file, or a folder of them');
  const hash = createHash('sha256');
  const inputs: SourceInput[] = [];
  let inputBytes = 0;
  for (const file of files) {
    const bytes = await readFile(file);
    hash.update(bytes);
    inputBytes += bytes.byteLength;
    const name = displayName(file);
    if (/\.zip$/i.test(file)) inputs.push(...unzipEntries(name, bytes));
    else inputs.push({ name, kind: kindOrThrow(name, bytes), bytes });
  }
  return { inputs, sourceRevision: `sha256:${hash.digest('hex')}`, inputBytes };
}

function unzipEntries(zipName: string, bytes: Uint8Array): SourceInput[] {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (err) {
    throw new Error(`${zipName}: not a readable zip (${(err as Error).message})`);
  }
  const names = Object.keys(entries)
    .filter((n) => !n.endsWith('/') && SOURCE_FILE.test(n) && !/\.zip$/i.test(n) && !basename(n).startsWith('.'))
    .sort();
  if (names.length === 0) throw new Error(`${zipName}: the zip holds no .txt or .json file`);
  return names.map((n) => {
    const entry = entries[n] as Uint8Array;
    const name = `${zipName}!${n}`;
    return { name, kind: kindOrThrow(name, entry), bytes: entry };
  });
}

function kindOrThrow(name: string, bytes: Uint8Array): SourceKind {
  const kind = detectKind(bytes);
  if (kind === null) {
    throw new Error(`${name}: not a source this build reads (expected an FDA pmn or foiclass pipe file, or an openFDA JSON download)`);
  }
  return kind;
}

async function expand(path: string): Promise<string[]> {
  const st = await stat(path).catch(() => null);
  if (!st) throw new Error(`source not found: ${path}`);
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  const names = (await readdir(path)).sort();
  for (const n of names) {
    if (n.startsWith('.')) continue;
    const child = join(path, n);
    const cst = await stat(child);
    if (cst.isDirectory()) out.push(...(await expand(child)));
    else if (SOURCE_FILE.test(n)) out.push(child);
  }
  return out;
}

/** Paths inside the working directory are shown relative to it; others by their last two segments. */
function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  const parts = (rel.startsWith('..') || rel === '' ? file : rel).split(sep);
  return rel.startsWith('..') ? parts.slice(-2).join('/') : parts.join('/');
}
