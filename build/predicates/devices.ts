import { readSources } from '../sources/read.ts';
import { decodeJsonText, decodePipeText } from '../sources/parse.ts';

/**
 * A clearance the pipeline may fetch a summary for: its number, decision day (`YYYY-MM-DD`, or null) and review
 * panel (`CH`, `MI`, …, or null).
 */
export type Clearance = { id: string; decided: string | null; panel: string | null };

/** The review panels of laboratory (in vitro diagnostic) devices: FDA publishes a decision summary for their 510(k)s. */
export const LAB_PANELS: ReadonlySet<string> = new Set(['CH', 'HE', 'IM', 'MI', 'PA', 'TX']);

const K_OR_DEN = /^(?:K|DEN)\d{6}$/;

function isoDay(value: string): string | null {
  const v = value.trim();
  let m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(v);
  if (m) return `${m[3]}-${m[1]}-${m[2]}`;
  m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(v);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** The K and DEN numbers of FDA's pipe files and openFDA JSON among `paths` (files, folders or zips), newest first. */
export async function clearancesIn(paths: readonly string[]): Promise<Clearance[]> {
  const { inputs } = await readSources(paths);
  const byId = new Map<string, { decided: string | null; panel: string | null }>();
  const put = (id: string, decided: string | null, panel: string) => {
    const was = byId.get(id);
    byId.set(id, { decided: decided ?? was?.decided ?? null, panel: panel.trim().toUpperCase() || was?.panel || null });
  };
  for (const input of inputs) {
    if (input.kind === 'pmn') {
      const lines = decodePipeText(input.bytes).split(/\r?\n/);
      const header = (lines[0] ?? '').split('|').map((c) => c.trim().toUpperCase());
      const k = header.indexOf('KNUMBER');
      const d = header.indexOf('DECISIONDATE');
      const p = header.indexOf('REVIEWADVISECOMM');
      for (const line of lines.slice(1)) {
        const cells = line.split('|');
        const id = (cells[k] ?? '').trim().toUpperCase();
        if (K_OR_DEN.test(id)) put(id, isoDay(cells[d] ?? ''), p < 0 ? '' : (cells[p] ?? ''));
      }
    } else if (input.kind === 'openfda-json') {
      const json = JSON.parse(decodeJsonText(input.bytes)) as { results?: { k_number?: unknown; decision_date?: unknown; advisory_committee?: unknown }[] };
      for (const r of json.results ?? []) {
        const id = String(r.k_number ?? '').trim().toUpperCase();
        if (K_OR_DEN.test(id)) put(id, isoDay(String(r.decision_date ?? '')), typeof r.advisory_committee === 'string' ? r.advisory_committee : '');
      }
    }
  }
  return [...byId]
    .map(([id, c]) => ({ id, ...c }))
    .sort((a, b) => (b.decided ?? '').localeCompare(a.decided ?? '') || b.id.localeCompare(a.id));
}

/**
 * The clearances a run fetches summaries for: `recent` (the nightly sync) takes those decided within `days` of the
 * newest one, otherwise (the backfill) every one, newest first; decision summaries for laboratory devices.
 */
export function clearancesToFetch(clearances: readonly Clearance[], recent: { days: number } | null): { devices: string[]; decisions: Set<string> } {
  let chosen = clearances;
  if (recent) {
    const newest = clearances.find((c) => c.decided !== null)?.decided;
    const from = newest ? new Date(Date.parse(newest) - recent.days * 86_400_000).toISOString().slice(0, 10) : null;
    chosen = from ? clearances.filter((c) => c.decided !== null && c.decided >= from) : [];
  }
  return { devices: chosen.map((c) => c.id), decisions: new Set(chosen.filter((c) => c.panel !== null && LAB_PANELS.has(c.panel)).map((c) => c.id)) };
}
