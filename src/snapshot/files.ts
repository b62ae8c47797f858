import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import pLimit from 'p-limit';
import type { FileEntry } from '../contract/index.ts';

/** The file-system side of a snapshot: reading its files and checking that the ones its manifest lists are there. */

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A path relative to the snapshot root, or null when it would leave the root or is not a plain relative path. */
export function safeRelPath(path: string): string | null {
  if (path === '' || path.includes('\0') || path.includes('\\')) return null;
  const rel = posix.normalize(path);
  if (rel !== path || rel.startsWith('/') || rel === '..' || rel.startsWith('../') || rel === '.') return null;
  return rel;
}

export async function readSnapshotFile(root: string, rel: string): Promise<Buffer> {
  return readFile(join(root, rel));
}

/**
 * Problems with the listed files: missing, not a file, or of another size than the manifest says. Sizes, not
 * digests: hashing every file would read the whole snapshot on each switch, while a truncated or half-copied file
 * (what actually goes wrong with a copy or a full disk) always shows in its size.
 */
export async function checkListedFiles(root: string, files: readonly FileEntry[], concurrency = 32): Promise<string[]> {
  const limit = pLimit(concurrency);
  const problems: string[] = [];
  await Promise.all(
    files.map((f) =>
      limit(async () => {
        const rel = safeRelPath(f.path);
        if (rel === null) {
          problems.push(`${f.path}: not a path inside the snapshot`);
          return;
        }
        const st = await stat(join(root, rel)).catch(() => null);
        if (!st) problems.push(`${f.path}: missing`);
        else if (!st.isFile()) problems.push(`${f.path}: not a file`);
        else if (st.size !== f.bytes) problems.push(`${f.path}: ${st.size} bytes, manifest says ${f.bytes}`);
      }),
    ),
  );
  return problems.sort();
}
