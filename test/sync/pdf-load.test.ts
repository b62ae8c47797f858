import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * pdf.js weighs some 150 MiB and seconds on the process that imports it, and it announces itself as
 * `globalThis.pdfjsLib` once loaded. The sync imports the summary reader; pdf.js must come only with the first PDF
 * read, so a sync that fails early (a bomb refused, an origin down) or reads no summary stays small. Run in a process
 * of its own: the test runner's module cache is shared by the files of one worker.
 */
function loadedAfter(script: string): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.trim();
}

describe('the sync loads pdf.js', () => {
  it('not when its modules are imported', () => {
    expect(loadedAfter(`await import('./build/sync/run.ts'); await import('./build/sync/cli.ts'); console.log(typeof globalThis.pdfjsLib);`)).toBe('undefined');
  });

  it('on the first PDF it reads', () => {
    const script = `
      const { summaryPdf } = await import('./test/helpers/summary-pdf.ts');
      const { pdfText } = await import('./build/predicates/pdf.ts');
      const before = typeof globalThis.pdfjsLib;
      const read = await pdfText(await summaryPdf('510(k) Summary. The legally marketed predicate device is the Example Catheter, K123456.'));
      console.log(before, typeof globalThis.pdfjsLib, read.status, read.status === 'read' && read.text.includes('K123456'));`;
    expect(loadedAfter(script)).toBe('undefined object read true');
  });
});
