import { allocateKNumbers, sequenceNumbers, type PrefixPlan } from './allocate.ts';
import { dayOf, fdaDateFormatter } from './dates.ts';
import type { Pool } from './pool.ts';
import { createRandom, randomIndex, type Random } from './random.ts';

export const DEFAULT_SEED = '510k';
export const DEFAULT_ROWS_PER_FILE = 250_000;

export type GenerateOptions = { records: number; seed?: string; rowsPerFile?: number };

/** One output file: its rows (each ending in CRLF) after FDA's header line, as a latin1 string. */
export type GeneratedFile = { name: string; rows: number; text: string };

/**
 * Derives `records` rows in FDA's pipe layout from the pool. Each row takes what was cleared (product code, name,
 * committees, decision) from one real row and who submitted it from another, so product codes keep their real
 * distribution. The K number fixes the year of receipt; receipts run through the year in K-number order, as FDA
 * numbers them, and the decision follows after a real review time. Files hold at most `rowsPerFile` rows, in order.
 */
export function generatePmnFiles(pool: Pool, options: GenerateOptions): GeneratedFile[] {
  const rowsPerFile = options.rowsPerFile ?? DEFAULT_ROWS_PER_FILE;
  if (!Number.isInteger(rowsPerFile) || rowsPerFile < 1) throw new Error(`Expected \`rowsPerFile\` to be an integer from 1 and up, got ${rowsPerFile}`);
  const random = createRandom(options.seed ?? DEFAULT_SEED);
  const plan = allocateKNumbers(options.records);
  const lines = generateLines(pool, plan, random);

  const fileCount = Math.ceil(lines.length / rowsPerFile);
  const perFile = Math.ceil(lines.length / fileCount);
  const files: GeneratedFile[] = [];
  for (let f = 0; f < fileCount; f++) {
    const chunk = lines.slice(f * perFile, (f + 1) * perFile);
    files.push({ name: `pmn-generated-${f + 1}.txt`, rows: chunk.length, text: `${pool.header}\r\n${chunk.join('')}` });
  }
  return files;
}

function generateLines(pool: Pool, plan: readonly PrefixPlan[], random: Random): string[] {
  const format = fdaDateFormatter();
  const volumes = plan.filter((p) => p.year !== null) as (PrefixPlan & { year: number })[];
  const lines: string[] = [];
  for (const { prefix, year, count } of plan) {
    const sequences = sequenceNumbers(count);
    for (let i = 0; i < sequences.length; i++) {
      // Prefixes of no real year (only past 510,000 records) borrow a year in proportion to the real volumes.
      const receiptYear = year ?? pickYear(volumes, random);
      const first = Math.max(dayOf(receiptYear, 1, 1), pool.firstDay);
      // The last real decision day bounds the newest year: receipts stop a day before it.
      const last = Math.min(dayOf(receiptYear, 12, 31), pool.lastDay - 1);
      const span = Math.max(1, last - first + 1);
      const position = year === null ? random() : (i + random()) / sequences.length;
      const received = first + Math.min(span - 1, Math.floor(position * span));
      let review = pool.reviewDays[randomIndex(random, pool.reviewDays.length)] ?? 90;
      if (received + review > pool.lastDay) review = 1 + randomIndex(random, pool.lastDay - received);
      const glitch = random() < pool.glitchRate && pool.glitchDates.length > 0;
      const decision = glitch
        ? (pool.glitchDates[randomIndex(random, pool.glitchDates.length)] ?? '')
        : format(received + review);
      const applicant = pool.applicants[randomIndex(random, pool.applicants.length)] ?? '';
      const device = pool.devices[randomIndex(random, pool.devices.length)] ?? '';
      const kNumber = `K${prefix}${String(sequences[i]).padStart(4, '0')}`;
      lines.push(`${kNumber}|${applicant}|${format(received)}|${decision}|${device}\r\n`);
    }
  }
  return lines;
}

function pickYear(volumes: readonly (PrefixPlan & { year: number })[], random: Random): number {
  // Weighted by the counts the real prefixes received, which follow the real volumes.
  let total = 0;
  for (const v of volumes) total += v.count;
  let target = random() * total;
  for (const v of volumes) {
    target -= v.count;
    if (target < 0) return v.year;
  }
  return volumes[volumes.length - 1]?.year ?? 2000;
}
