import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { unzipSync } from 'fflate';
import { detectKind, type SourceKind } from './parse.ts';
import { isEdgeFolder } from '../lineage/read.ts';

/** One logical source file: a plain file, or one entry of a zip. */
export type SourceInput = { name: string; kind: SourceKind; bytes: Uint8Array };

export type ReadSources = { inputs: SourceInput[]; sourceRevision: string; inputBytes: number };

const SOURCE_FILE = /\.(txt|json|zip)$/i;

/**
 * Reads the sources in precedence order. A directory stands for its source files in path order; a zip for its
 * entries in name order. The revision is a sha256 over the bytes of the inputs as given (zips as zipped).
 */
/** The most a zip entry may inflate to when the caller names no limit: more than any FDA text file, by far. */
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024 * 1024;

/** Whether the build reads a zip entry: a .txt or .json file, not hidden, not a folder. The rest are never inflated. */
export function readsEntry(name: string): boolean {
  return !name.endsWith('/') && SOURCE_FILE.test(name) && !/\.zip$/i.test(name) && !basename(name).startsWith('.');
}

export type ReadSourcesOptions = {
  /** The most a zip entry the build reads may inflate to (default DEFAULT_MAX_ENTRY_BYTES), and its name in messages. */
  maxEntryBytes?: number;
  maxEntryName?: string;
};

export async function readSources(paths: readonly string[], options: ReadSourcesOptions = {}): Promise<ReadSources> {
  const limit = { bytes: options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES, name: options.maxEntryName ?? 'the build\'s limit per zip entry' };
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
    if (/\.zip$/i.test(file)) inputs.push(...unzipEntries(name, bytes, limit));
    else inputs.push({ name, kind: kindOrThrow(name, bytes), bytes });
  }
  return { inputs, sourceRevision: `sha256:${hash.digest('hex')}`, inputBytes };
}

function unzipEntries(zipName: string, bytes: Uint8Array, limit: { bytes: number; name: string }): SourceInput[] {
  let entries: Record<string, Uint8Array>;
  let tooLarge: string | null = null;
  try {
    // Only the entries read are inflated, each into a buffer of its declared size (fflate never grows it, so a
    // directory that under-declares yields a short entry, not a large one), and none declared past the limit.
    entries = unzipSync(bytes, {
      filter: (f) => {
        if (!readsEntry(f.name)) return false;
        if (f.originalSize > limit.bytes) {
          tooLarge ??= `${zipName}!${f.name}: would inflate to ${f.originalSize.toLocaleString('en-US')} bytes, past the limit of ${limit.bytes.toLocaleString('en-US')} bytes (${limit.name})`;
          throw new Error(tooLarge);
        }
        return true;
      },
    });
  } catch (err) {
    if (tooLarge !== null) throw new Error(tooLarge);
    throw new Error(`${zipName}: not a readable zip (${(err as Error).message})`);
  }
  const names = Object.keys(entries).sort();
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
  // Edge inputs (a predicates.csv beside a source.json) are read by the lineage stage, not as clearances.
  if (await isEdgeFolder(path)) return [];
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
