import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Lookups } from '../normalize/lookups.ts';

export const LOOKUPS_DIR = fileURLToPath(new URL('../../data/fda/lookups/', import.meta.url));

/** Splits one delimited line, honouring double quotes (RFC 4180 style) as the lookup tables use them. */
export function splitDelimited(line: string, delimiter: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"' && cur === '') quoted = true;
    else if (ch === delimiter) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function table(text: string, delimiter: string, skipHeader: boolean): string[][] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  return (skipHeader ? lines.slice(1) : lines).map((l) => splitDelimited(l, delimiter).map((c) => c.trim()));
}

/**
 * The bundled code tables: decision codes (the pmn files' 4-letter codes, then openFDA's 2-letter ones) and
 * openFDA's advisory-committee names.
 */
export async function readLookups(dir = LOOKUPS_DIR): Promise<Lookups> {
  const [fourLetter, twoLetter, committees] = await Promise.all([
    readFile(`${dir}/bjoleary_fdadata/decisions.csv`, 'utf8'),
    readFile(`${dir}/FDA_openfda/decision_codes.csv`, 'utf8'),
    readFile(`${dir}/advisory-committees.csv`, 'utf8'),
  ]);
  const decisions = new Map<string, string>();
  for (const [code, name] of table(twoLetter, ',', false)) if (code && name) decisions.set(code.toUpperCase(), name);
  for (const [code, , name] of table(fourLetter, '|', true)) if (code && name) decisions.set(code.toUpperCase(), name);
  const committeeMap = new Map<string, string>();
  for (const [code, name] of table(committees, ',', true)) if (code && name) committeeMap.set(code.toUpperCase(), name);
  return { decisions, committees: committeeMap };
}
