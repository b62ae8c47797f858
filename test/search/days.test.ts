import { describe, expect, it } from 'vitest';
import { dayTableOf, dayTableSteps } from '../../src/search/days.ts';

/** The index's day number of an ISO date, written out here: 1 is 1900-01-01 (src/contract/search-index.ts). */
const day = (iso: string) => Math.round((Date.parse(`${iso}T00:00:00Z`) - Date.parse('1900-01-01T00:00:00Z')) / 86_400_000) + 1;

describe('the day table of a date column', () => {
  it('lists the distinct days in time order, ranks each document among them, and counts every day', () => {
    const dates = [null, '2024-01-02', '1900-01-01', '2024-01-02', null, '1999-12-31', '2024-02-29', '1999-12-31', '2024-01-02'];
    const col = Uint32Array.from(dates, (d) => (d === null ? 0 : day(d)));
    const table = dayTableOf(col);
    const distinct = [...new Set(dates.filter((d): d is string => d !== null))].sort();
    expect(table.iso).toEqual(distinct);
    expect([...table.docDay]).toEqual(dates.map((d) => (d === null ? 0xffff : distinct.indexOf(d))));
    expect([...table.all]).toEqual(distinct.map((d) => dates.filter((x) => x === d).length));
    expect(dayTableOf(col)).toBe(table);
  });

  it('ranks in four bytes when the days are too many for two, and counts them all', () => {
    const days = 70_000;
    const col = new Uint32Array(days + 1);
    for (let d = 0; d < days; d++) col[d] = days - d; // every day from 1900-01-01 on, newest first, then no date
    const table = dayTableOf(col);
    expect(table.iso.length).toBe(days);
    expect(table.iso[0]).toBe('1900-01-01');
    expect(table.iso[days - 1]).toBe(new Date(Date.UTC(1900, 0, days)).toISOString().slice(0, 10));
    expect(table.docDay[0]).toBe(days - 1);
    expect(table.docDay[days]!).toBeGreaterThanOrEqual(days);
    expect(table.all.every((c) => c === 1)).toBe(true);
  });

  it('has no days for a column without dates, or without documents', () => {
    for (const col of [new Uint32Array(0), new Uint32Array(5)]) {
      const table = dayTableOf(col);
      expect(table.iso).toEqual([]);
      expect(table.all.length).toBe(0);
      expect([...table.docDay].every((r) => r >= table.iso.length)).toBe(true);
    }
  });

  it('is made in slices of a few documents as it is made whole, with a yield point every slice of each pass', () => {
    const dates = [null, '2024-01-02', '1900-01-01', '2024-01-02', null, '1999-12-31', '2024-02-29', '1999-12-31', '2024-01-02', '2001-09-11'];
    const whole = dayTableOf(Uint32Array.from(dates, (d) => (d === null ? 0 : day(d))));
    // A column of its own (the table is kept per column): made from nothing, in slices of 3 documents.
    const col = Uint32Array.from(dates, (d) => (d === null ? 0 : day(d)));
    const steps = dayTableSteps(col, 3);
    let yields = 0;
    let next = steps.next();
    for (; !next.done; next = steps.next()) yields++;
    expect({ iso: next.value.iso, docDay: [...next.value.docDay], all: [...next.value.all] }).toEqual({ iso: whole.iso, docDay: [...whole.docDay], all: [...whole.all] });
    // Three passes over 10 documents, cut every 3 (3 points each), and one between the second and the third.
    expect(yields).toBe(3 * 3 + 1);
    // Kept: asked again, it is there at once.
    expect(dayTableSteps(col, 3).next()).toEqual({ done: true, value: next.value });
  });
});
