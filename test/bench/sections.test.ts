import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSection, type SectionLine, type SectionOutput } from '../../bench/lib/sections.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** The bench prints and keeps each section's figures before the next section starts. */
let dir: string;
beforeAll(async () => {
  dir = await testTempDir('sections-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const linesOf = async (file: string): Promise<SectionLine[]> =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SectionLine);

describe('runSection', () => {
  it("prints a section's table and appends its figures before the next section begins", async () => {
    const printed: string[] = [];
    const file = join(dir, 'out', 'sections.ndjson');
    const out: SectionOutput = { print: (t) => printed.push(t), file, runStartedAt: '2026-11-28T00:00:00.000Z', mode: 'quick' };
    const seenBySecond: { printed: string; lines: SectionLine[] }[] = [];
    await runSection({ size: '175k', name: 'first', run: async () => ({ rps: 1234 }), render: (f) => `| first | ${f.rps} |` }, out);
    await runSection(
      {
        size: '175k',
        name: 'second',
        run: async () => {
          seenBySecond.push({ printed: printed.join(''), lines: await linesOf(file) });
          return { rps: 99 };
        },
        render: (f) => `| second | ${f.rps} |`,
      },
      out,
    );
    // When the second section started, the first's table was on the screen and its figures in the file.
    expect(seenBySecond).toHaveLength(1);
    expect(seenBySecond[0]!.printed).toContain('175k: first');
    expect(seenBySecond[0]!.printed).toContain('| first | 1234 |');
    expect(seenBySecond[0]!.printed).not.toContain('second');
    expect(seenBySecond[0]!.lines.map((l) => [l.section, l.figures])).toEqual([['first', { rps: 1234 }]]);
    const lines = await linesOf(file);
    expect(lines.map((l) => [l.size, l.section, l.mode, l.runStartedAt, l.figures])).toEqual([
      ['175k', 'first', 'quick', '2026-11-28T00:00:00.000Z', { rps: 1234 }],
      ['175k', 'second', 'quick', '2026-11-28T00:00:00.000Z', { rps: 99 }],
    ]);
    expect(printed.join('')).toContain('| second | 99 |');
  });

  it('a section that fails leaves the sections before it printed and kept, and nothing of its own', async () => {
    const printed: string[] = [];
    const file = join(dir, 'failed.ndjson');
    const out: SectionOutput = { print: (t) => printed.push(t), file, runStartedAt: 'r', mode: 'full' };
    await runSection({ size: null, name: 'kept', run: async () => 1, render: (n) => `kept ${n}` }, out);
    await expect(runSection({ size: null, name: 'broken', run: async () => Promise.reject(new Error('no server')), render: () => 'never' }, out)).rejects.toThrow('no server');
    expect((await linesOf(file)).map((l) => l.section)).toEqual(['kept']);
    expect(printed.join('')).toContain('kept 1');
    expect(printed.join('')).not.toContain('never');
  });
});
