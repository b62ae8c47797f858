import { snapshotFiles } from '../../src/client/index.ts';
import { LAYOUT, type FileEntry, type Manifest } from '../../src/contract/index.ts';
import { safeRelPath } from '../../src/snapshot/paths.ts';

/** Pure parts of the mirror: which file comes from where, and which paths a manifest may name. */

/**
 * Where a file of the new snapshot comes from: already staged by an interrupted run, the local copy, the origin, or
 * (for a precompressed sibling) compressed here from its file and checked against its own sha256.
 */
export type FileSource = 'staged' | 'local' | 'origin' | 'derived';

/**
 * A manifest from another server is input, not trust: every path must stay inside the snapshot folder, be named
 * once, and not be the manifest itself or a hidden file (the mirror keeps its own bookkeeping in those).
 */
export function checkManifestPaths(manifest: Manifest): void {
  const seen = new Set<string>();
  for (const f of manifest.files) {
    const p = f.path;
    // The snapshot's own rule for a path inside it, plus the mirror's: no hidden segment, not the manifest.
    if (safeRelPath(p) === null || p.split('/').some((seg) => seg.startsWith('.')) || p === LAYOUT.manifest) {
      throw new Error(`the manifest names a path a mirror will not write: ${JSON.stringify(p)}`);
    }
    if (seen.has(p)) throw new Error(`the manifest names ${p} twice`);
    seen.add(p);
  }
}

/** The local copy's files that can stand for the new ones: same path, same sha256 (verified before use). */
export function reusableLocal(remote: Manifest, local: Manifest | null): Map<string, FileEntry> {
  const mine = new Map((local?.files ?? []).map((f) => [f.path, f]));
  const out = new Map<string, FileEntry>();
  for (const f of remote.files) {
    const l = mine.get(f.path);
    if (l && l.sha256 === f.sha256 && l.bytes === f.bytes) out.set(f.path, l);
  }
  return out;
}

/** A file's URL under `from`, each path segment escaped, as the package's client spells it. */
export function fileUrl(from: string, path: string): string {
  return snapshotFiles(from).url(path);
}
