/**
 * Whole days from `received` to `decided` (ISO dates); null when either is missing. The records' `reviewDays`, and
 * the static page's for records that do not carry it (bundled for the page by build/page/bundle.ts).
 */
export function reviewDaysOf(received: string | null, decided: string | null): number | null {
  if (received === null || decided === null) return null;
  return (Date.parse(`${decided}T00:00:00Z`) - Date.parse(`${received}T00:00:00Z`)) / 86_400_000;
}
