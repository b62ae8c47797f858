import { readFile, writeFile } from 'node:fs/promises';

/** Column positions of FDA's pmn pipe files. */
export const PMN = { KNUMBER: 0, APPLICANT: 1, DEVICENAME: 21 } as const;

export type PmnEdit = {
  /** K number → column → new value (bytes kept as latin1, so Windows-1252 survives). */
  set?: Record<string, Record<number, string>>;
  remove?: string[];
  /** New rows: a copy of `from` under a new K number. */
  add?: { kNumber: string; from: string }[];
};

/** Applies edits to a pmn pipe file's text: the "upstream change" of the change-log, sync and mirror tests. */
export function editPmnText(text: string, edit: PmnEdit): string {
  const lines = text.split('\r\n');
  const out: string[] = [];
  const byK = new Map<string, string[]>();
  for (const [i, line] of lines.entries()) {
    if (i === 0 || line === '') {
      out.push(line);
      continue;
    }
    const fields = line.split('|');
    const k = fields[PMN.KNUMBER] ?? '';
    byK.set(k, fields);
    if (edit.remove?.includes(k)) continue;
    for (const [col, value] of Object.entries(edit.set?.[k] ?? {})) fields[Number(col)] = value;
    out.push(fields.join('|'));
  }
  const tail = out[out.length - 1] === '' ? out.pop() : undefined;
  for (const a of edit.add ?? []) {
    const source = byK.get(a.from);
    if (!source) throw new Error(`no row ${a.from} to copy`);
    out.push([a.kNumber, ...source.slice(1)].join('|'));
  }
  if (tail !== undefined) out.push(tail);
  return out.join('\r\n');
}

export async function writeEditedPmn(from: string, to: string, edit: PmnEdit): Promise<void> {
  await writeFile(to, Buffer.from(editPmnText((await readFile(from)).toString('latin1'), edit), 'latin1'));
}
