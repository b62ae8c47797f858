import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';

/**
 * A published snapshot is a directory under `<out>-builds/`, and `<out>` is a symbolic link to it. Switching in a new
 * snapshot is one rename(2) of a fresh link over the old one: atomic, so a reader sees the old snapshot or the new
 * one, never a mix, and a build that dies before the rename leaves the served snapshot as it was.
 */
/** A published snapshot's folder name, for the build and the mirror alike: generation time and snapshot id. */
export function snapshotDirName(manifest: { generatedAt: string; snapshotId: string }): string {
  return `${manifest.generatedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${manifest.snapshotId}`;
}

export function buildsDirFor(out: string): string {
  const abs = resolve(out);
  return join(dirname(abs), `${basename(abs)}-builds`);
}

/** A fresh, empty directory beside the published ones, for a build (or a mirror) to write into. */
export async function makeStagingDir(out: string): Promise<string> {
  const builds = buildsDirFor(out);
  await mkdir(builds, { recursive: true });
  const dir = join(builds, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir);
  return dir;
}

/**
 * Moves a finished staging directory to its final name and points `out` at it. `name` should identify the snapshot
 * (its id and time); the previous `keep` snapshots stay on disk so in-flight requests on them can finish.
 */
export async function publishSnapshot(stagingDir: string, out: string, name: string, keep = 2): Promise<string> {
  const builds = buildsDirFor(out);
  const outAbs = resolve(out);
  let finalDir = join(builds, name);
  if (await exists(finalDir)) finalDir = join(builds, `${name}-${randomBytes(3).toString('hex')}`);
  await rename(stagingDir, finalDir);

  const existing = await lstat(outAbs).catch(() => null);
  if (existing && !existing.isSymbolicLink()) {
    // A plain directory from a copy or an older layout: keep it as a published build, then link over it.
    await rename(outAbs, join(builds, `previous-${Date.now()}`));
  }
  const tmpLink = join(dirname(outAbs), `.${basename(outAbs)}.link-${process.pid}-${randomBytes(3).toString('hex')}`);
  await symlink(relative(dirname(outAbs), finalDir), tmpLink, 'dir');
  await rename(tmpLink, outAbs);
  await pruneBuilds(out, keep);
  return finalDir;
}

/**
 * Removes what dead builds left (their staging directories, and the link of a switch they did not finish) and all
 * but the newest `keep` published snapshots besides the active one.
 */
export async function pruneBuilds(out: string, keep = 2): Promise<void> {
  const builds = buildsDirFor(out);
  // A build killed between making its fresh link and renaming it over `out` leaves that link beside `out`.
  const outAbs = resolve(out);
  const linkPrefix = `.${basename(outAbs)}.link-`;
  for (const name of await readdir(dirname(outAbs)).catch(() => [] as string[])) {
    if (name.startsWith(linkPrefix) && !isAlive(Number(name.slice(linkPrefix.length).split('-')[0]))) {
      await rm(join(dirname(outAbs), name), { force: true });
    }
  }
  const active = await activeSnapshotDir(out);
  const names = await readdir(builds).catch(() => [] as string[]);
  const published: { name: string; mtime: number }[] = [];
  for (const name of names) {
    const abs = join(builds, name);
    if (abs === active) continue;
    if (name.startsWith('.staging-')) {
      const pid = Number(name.split('-')[1]);
      if (!isAlive(pid)) await rm(abs, { recursive: true, force: true });
      continue;
    }
    const st = await lstat(abs).catch(() => null);
    if (st?.isDirectory()) published.push({ name, mtime: st.mtimeMs });
  }
  published.sort((a, b) => b.mtime - a.mtime);
  for (const old of published.slice(keep)) await rm(join(builds, old.name), { recursive: true, force: true });
}

/** The directory `out` points at now, or null when there is no published snapshot. */
export async function activeSnapshotDir(out: string): Promise<string | null> {
  const outAbs = resolve(out);
  const st = await lstat(outAbs).catch(() => null);
  if (!st) return null;
  if (!st.isSymbolicLink()) return st.isDirectory() ? outAbs : null;
  return resolve(dirname(outAbs), await readlink(outAbs));
}

/** Whether a process of this id is running (EPERM means it is, under another user). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null)) !== null;
}
