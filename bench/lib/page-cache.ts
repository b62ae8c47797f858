import { spawnSync } from 'node:child_process';

/**
 * Drops the pages of every file under `dir` from the kernel's page cache (posix_fadvise DONTNEED, through python3:
 * Node has no call for it), so that the next reads of them go to the disk, as on a server whose memory went to other
 * work since. Only pages nobody has changed are dropped, and only from the cache: nothing is written. Returns false
 * where it cannot be done (no python3, not Linux); a figure measured then is not a cold one.
 */
export function evictFromPageCache(dir: string): boolean {
  const script = [
    'import os, sys',
    'for root, _, files in os.walk(sys.argv[1]):',
    '    for name in files:',
    '        fd = os.open(os.path.join(root, name), os.O_RDONLY)',
    '        try: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)',
    '        finally: os.close(fd)',
  ].join('\n');
  const run = spawnSync('python3', ['-c', script, dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
  return run.status === 0;
}
