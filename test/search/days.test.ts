import { describe, expect, it } from 'vitest';
import { dayTableOf, NO_DAY } from '../../src/search/days.ts';

/** The index's day number of an ISO date, written out here: 1 is 1900-01-01 (src/contract/search-index.ts). */
const day = (iso: string) => Math.round((Date.parse(`${iso}T00:00:00Z`) - Date.parse('1900-01-01T00:00:00Z')) / 86_400_000) + 1;

describe('the day table of a date column', () => {
  it('lists the distinct days in time order, ranks each document among them, and counts every day', () => {
    const dates = [null, '2024-01-02', '1900-01-01', '2024-01-02', null, '1999-12-31', '2024-02-29', '1999-12-31', '2024-01-02'];
    const col = Uint32Array.from(dates, (d) => (d === null ? 0 : day(d)));
    const table = dayTableOf(col);
    const distinct = [...new Set(dates.filter((d): d is string => d !== null))].sort();
    expect(table.iso).toEqual(distinct);
    expect([...table.docDay]).toEqual(dates.map((d) => (d === null ? NO_DAY : distinct.indexOf(d))));
    expect([...table.all]).toEqual(distinct.map((d) => dates.filter((x) => x === d).length));
    expect(dayTableOf(col)).toBe(table);
  });

  it('has no days for a column without dates, or without documents', () => {
    for (const col of [new Uint32Array(0), new Uint32Array(5)]) {
      const table = dayTableOf(col);
      expect(table.iso).toEqual([]);
      expect(table.all.length).toBe(0);
      expect([...table.docDay].every((r) => r === NO_DAY)).toBe(true);
    }
  });
});
