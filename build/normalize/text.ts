/** Pure text rules of docs/contract.md section 4, shared by every source layout. */

/** Trims and collapses runs of white space; null when nothing is left. */
export function collapsed(value: string | null | undefined): string | null {
  if (value == null) return null;
  const s = value.replace(/\s+/g, ' ').trim();
  return s === '' ? null : s;
}

/** Trimmed as given; null when empty. */
export function trimmed(value: string | null | undefined): string | null {
  if (value == null) return null;
  const s = value.trim();
  return s === '' ? null : s;
}

export function upper(value: string | null | undefined): string | null {
  const s = trimmed(value);
  return s === null ? null : s.toUpperCase();
}

/** `Y` → true, `N` → false, anything else → null. */
export function flag(value: string | null | undefined): boolean | null {
  const s = upper(value);
  return s === 'Y' ? true : s === 'N' ? false : null;
}

export type DateResult = { value: string | null; issue: string | null };

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isoIfValid(y: number, m: number, d: number, raw: string): DateResult {
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = m === 2 && leap ? 29 : DAYS_IN_MONTH[m - 1];
  if (days === undefined || d < 1 || d > days) return { value: null, issue: `impossible date "${raw}"` };
  if (y < 1900) return { value: null, issue: `date before 1900 "${raw}"` };
  const iso = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  return { value: iso, issue: null };
}

/** FDA pipe files write dates as MM/DD/YYYY. */
export function usDate(value: string | null | undefined): DateResult {
  const raw = trimmed(value);
  if (raw === null) return { value: null, issue: null };
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(raw);
  if (!m) return { value: null, issue: `impossible date "${raw}"` };
  return isoIfValid(Number(m[3]), Number(m[1]), Number(m[2]), raw);
}

/** openFDA writes YYYY-MM-DD (downloads) or YYYYMMDD (older API answers). */
export function openFdaDate(value: string | null | undefined): DateResult {
  const raw = trimmed(value);
  if (raw === null) return { value: null, issue: null };
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(raw);
  if (!m) return { value: null, issue: `impossible date "${raw}"` };
  return isoIfValid(Number(m[1]), Number(m[2]), Number(m[3]), raw);
}

export type KNumberResult = { kNumber: string } | { skip: string };

/** Only `K` + six digits is a 510(k); De Novo (DEN…) and other numbers are skipped with a reason. */
export function kNumberOf(value: string | null | undefined): KNumberResult {
  const s = upper(value) ?? '';
  if (/^K\d{6}$/.test(s)) return { kNumber: s };
  if (s === '') return { skip: 'no K number' };
  if (s.startsWith('DEN')) return { skip: 'not a 510(k): De Novo number' };
  if (/^P\d/.test(s)) return { skip: 'not a 510(k): PMA number' };
  return { skip: 'malformed K number' };
}

export type CodeResult = { value: string | null; issue: string | null };

/** Product codes are three letters, upper case. */
export function productCodeOf(value: string | null | undefined): CodeResult {
  const s = upper(value);
  if (s === null) return { value: null, issue: null };
  if (/^[A-Z]{3}$/.test(s)) return { value: s, issue: null };
  return { value: null, issue: `malformed product code "${s}"` };
}
