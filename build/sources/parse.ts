/** Pure parsing of the source layouts: bytes in, rows out. No file system here. */

const utf8 = new TextDecoder('utf-8');

/**
 * Windows-1252 differs from Latin-1 only in 0x80–0x9F. Node 20's TextDecoder('windows-1252') decodes those bytes as
 * Latin-1 control characters (so ™ would come out as U+0099), hence this table (WHATWG encoding index; the five
 * undefined bytes map to themselves, as the WHATWG decoder does).
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
].map((cp) => String.fromCharCode(cp));

export function decodeCp1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin1.replace(/[\u0080-\u009f]/g, (ch) => CP1252_HIGH[ch.charCodeAt(0) - 0x80] as string);
}

export type SourceKind = 'pmn' | 'openfda-json' | 'foiclass';

/** FDA's pipe files are Windows-1252 and may hold NUL padding; both are undone here. */
export function decodePipeText(bytes: Uint8Array): string {
  return stripNul(decodeCp1252(bytes));
}

export function decodeJsonText(bytes: Uint8Array): string {
  return stripNul(utf8.decode(bytes)).replace(/^\uFEFF/, '');
}

function stripNul(s: string): string {
  return s.includes('\0') ? s.replaceAll('\0', '') : s;
}

/** Tells the layout from the first bytes; null when it is none of ours. */
export function detectKind(bytes: Uint8Array): SourceKind | null {
  const head = decodeCp1252(bytes.subarray(0, 4096)).replace(/^\uFEFF|^ï»¿/, '').replaceAll('\0', '');
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  const columns = firstLine.split('|').map((c) => c.trim().toUpperCase());
  if (columns.includes('KNUMBER') && columns.includes('DECISIONDATE')) return 'pmn';
  if (columns.includes('PRODUCTCODE') && columns.includes('DEVICECLASS')) return 'foiclass';
  if (head.trimStart().startsWith('{')) return 'openfda-json';
  return null;
}

export type PipeRow =
  | { line: number; row: Record<string, string> }
  | { line: number; problem: string };

/**
 * The rows of a pipe-delimited file with a header line, keyed by column name. Quotes are ordinary characters.
 * A row with the wrong number of fields is returned as a problem, never guessed at.
 */
export function* pipeRows(text: string): Generator<PipeRow> {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split('|').map((c) => c.trim().toUpperCase());
  // A final line break does not start a row.
  const last = lines.length > 1 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
  for (let i = 1; i < last; i++) {
    const lineText = lines[i] as string;
    const line = i + 1;
    if (lineText.trim() === '') {
      yield { line, problem: 'blank line' };
      continue;
    }
    const fields = lineText.split('|');
    if (fields.length !== header.length) {
      yield { line, problem: `${fields.length} fields where the header has ${header.length}` };
      continue;
    }
    const row: Record<string, string> = {};
    for (let c = 0; c < header.length; c++) row[header[c] as string] = fields[c] as string;
    yield { line, row };
  }
}

/** The header of a pipe file, upper-cased, for validating downloads. */
export function pipeHeader(text: string): string[] {
  return (text.split(/\r?\n/, 1)[0] ?? '').split('|').map((c) => c.trim().toUpperCase());
}

/** The `results` of an openFDA download (`{meta, results}`); throws with a plain reason when it is not one. */
export function openFdaResults(text: string): unknown[] {
  const doc: unknown = JSON.parse(text);
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { results?: unknown }).results)) {
    throw new Error('not an openFDA download: no "results" array');
  }
  return (doc as { results: unknown[] }).results;
}
