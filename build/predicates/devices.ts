import { readSources } from '../sources/read.ts';
import { decodeJsonText, decodePipeText } from '../sources/parse.ts';

/** A clearance the pipeline may fetch a summary for: its number and decision day (`YYYY-MM-DD`, or null). */
export type Clearance = { id: string; decided: string | null };

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
  const byId = new Map<string, string | null>();
  for (const input of inputs) {
    if (input.kind === 'pmn') {
      const lines = decodePipeText(input.bytes).split(/\r?\n/);
      const header = (lines[0] ?? '').split('|').map((c) => c.trim().toUpperCase());
      const k = header.indexOf('KNUMBER');
      const d = header.indexOf('DECISIONDATE');
      for (const line of lines.slice(1)) {
        const cells = line.split('|');
        const id = (cells[k] ?? '').trim().toUpperCase();
        if (K_OR_DEN.test(id)) byId.set(id, isoDay(cells[d] ?? '') ?? byId.get(id) ?? null);
      }
    } else if (input.kind === 'openfda-json') {
      const json = JSON.parse(decodeJsonText(input.bytes)) as { results?: { k_number?: unknown; decision_date?: unknown }[] };
      for (const r of json.results ?? []) {
        const id = String(r.k_number ?? '').trim().toUpperCase();
        if (K_OR_DEN.test(id)) byId.set(id, isoDay(String(r.decision_date ?? '')) ?? byId.get(id) ?? null);
      }
    }
  }
  return [...byId]
    .map(([id, decided]) => ({ id, decided }))
    .sort((a, b) => (b.decided ?? '').localeCompare(a.decided ?? '') || b.id.localeCompare(a.id));
}
