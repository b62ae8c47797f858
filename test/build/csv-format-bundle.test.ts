import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { bundleCsvFormat, CSV_BUNDLE } from '../../build/page/bundle.ts';

describe('the browser bundle of the CSV format', () => {
  test('is what src/operations/csv-format.ts gives today (run npm run build:page after changing it)', async () => {
    expect(await readFile(CSV_BUNDLE, 'utf8')).toBe(await bundleCsvFormat());
  });
});
