import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Files of test/ that may make a temporary folder themselves: the helper every other file makes them through
 * (removed once the test file is done), and the browser's launcher, which removes its profile when the browser closes.
 */
const OWN_CLEANUP = new Set(['test/helpers/temp-dirs.ts', 'test/browser/chromium.ts', 'test/structure/temp-dirs.test.ts']);

/** The lines of a test file that make a temporary folder no one removes (`mkdtemp` rather than testTempDir). */
export function unremovedTempDirs(file: string, text: string): string[] {
  if (OWN_CLEANUP.has(file)) return [];
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (/\bmkdtemp(?:Sync)?\(\s*join\(\s*tmpdir\(\)/.test(line) || /\bmkdtemp(?:Sync)?\(\s*`\$\{tmpdir\(\)\}/.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return out;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ts$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split('\\').join('/'));
}

describe('temporary folders of the tests', () => {
  it('finds a folder made with mkdtemp in the temporary folder (so the check can fail)', () => {
    expect(unremovedTempDirs('test/x.test.ts', "  const dir = await mkdtemp(join(tmpdir(), 'device-510k-x-'));")).toHaveLength(1);
    expect(unremovedTempDirs('test/x.test.ts', "  const dir = mkdtempSync(join(tmpdir(), 'x-'));")).toHaveLength(1);
    expect(unremovedTempDirs('test/x.test.ts', "  const dir = await testTempDir('device-510k-x-');")).toEqual([]);
  });

  // A machine that runs the suite nightly would fill its disk with fixture snapshots a few megabytes each.
  it('every test file makes its temporary folders through testTempDir, removed once the file is done', () => {
    const found = testFiles(join(ROOT, 'test')).flatMap((f) => unremovedTempDirs(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
