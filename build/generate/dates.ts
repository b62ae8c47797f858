/**
 * Dates as whole days since 1970-01-01 (UTC), so that spreading receipts over a year and adding review times is
 * integer arithmetic; FDA's pipe files write them as MM/DD/YYYY.
 */
const MS_PER_DAY = 86_400_000;

export function dayOf(year: number, month: number, day: number): number {
  return Math.floor(Date.UTC(year, month - 1, day) / MS_PER_DAY);
}

/** The day of an FDA `MM/DD/YYYY` value, or null when it is empty, malformed or impossible (02/30/1990). */
export function parseFdaDate(value: string): number | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value.trim());
  if (!m) return null;
  const month = Number(m[1]);
  const day = Number(m[2]);
  const year = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return null;
  return Math.floor(date.getTime() / MS_PER_DAY);
}

export function yearOfDay(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCFullYear();
}

/** A formatter that caches every day it has written: a million rows use only about 19,000 distinct days. */
export function fdaDateFormatter(): (day: number) => string {
  const cache = new Map<number, string>();
  return (day) => {
    let text = cache.get(day);
    if (text === undefined) {
      const d = new Date(day * MS_PER_DAY);
      const mm = String(d.getUTCMonth() + 1).padStart(2, '0');
      const dd = String(d.getUTCDate()).padStart(2, '0');
      text = `${mm}/${dd}/${String(d.getUTCFullYear()).padStart(4, '0')}`;
      cache.set(day, text);
    }
    return text;
  };
}
