import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingest, type Ingested } from '../../build/merge/ingest.ts';
import { defaultSources } from '../../build/sources/default.ts';
import { readLookups } from '../../build/sources/lookups.ts';
import { readSources } from '../../build/sources/read.ts';

/** The bundled real data, ingested exactly as the default build does (no files written). */
let result: Ingested;
let sources: string[];

beforeAll(async () => {
  sources = (await defaultSources()).sources;
  const { inputs } = await readSources(sources);
  result = ingest(inputs, await readLookups());
});

describe('the bundled FDA data', () => {
  it('gives exactly one record per distinct K number, and the report accounts for every other row', async () => {
    // Counted straight from the bytes, independently of the build's parsers.
    const numbers = new Set<string>();
    let rows = 0;
    for (const path of sources) {
      const buf = await readFile(path);
      if (path.endsWith('.json')) {
        const results = JSON.parse(buf.toString('utf8')).results as { k_number: string }[];
        rows += results.length;
        for (const r of results) numbers.add(r.k_number.toUpperCase());
      } else if (!/foiclass/.test(path)) {
        const lines = buf.toString('latin1').split(/\r?\n/).slice(1).filter((l) => l !== '');
        rows += lines.length;
        for (const l of lines) numbers.add((l.split('|')[0] as string).toUpperCase());
      }
    }
    const kNumbers = [...numbers].filter((k) => /^K\d{6}$/.test(k)).sort();
    expect(result.records.map((r) => r.kNumber)).toEqual(kNumbers);
    const skippedOrMerged = result.report.skipped.length + result.report.merged.length;
    const classificationRows = result.report.sources.filter((s) => s.kind === 'foiclass').reduce((n, s) => n + s.rows, 0);
    const classificationMerged = result.report.merged.filter((m) => m.kNumber === null).length;
    expect(result.records.length + skippedOrMerged - classificationMerged).toBe(rows);
    expect(result.classifications.length + classificationMerged).toBe(classificationRows);
    // What SOURCES.md says of these files: 57,890 distinct K and DEN numbers, of which the DEN ones are skipped.
    expect(numbers.size).toBe(57_890);
    expect(result.report.skipped.every((s) => s.reason === 'not a 510(k): De Novo number')).toBe(true);
  });

  it('keeps FDA\'s Windows-1252 characters', () => {
    const names = result.records.map((r) => r.deviceName).join('\n');
    expect(names).toContain('™');
    expect(names).not.toMatch(/[\u0080-\u009f]/);
  });
});
