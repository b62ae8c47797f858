/**
 * FDA numbers in OCR'd text: 510(k) numbers (K + 6 digits), De Novo numbers (DEN + 6 digits) and PMA numbers
 * (P + 6 digits). OCR splits and damages them (`K98307 1`, `k O51202`, `K- 983071`, `K 0 63263`), so a K or DEN number
 * may carry one separator after its letters, spaces between its digits, and letters read for digits (O for 0; I, l
 * and | for 1), as long as at least five of its six characters are real digits.
 */
export type NumberHit = {
  /** The number as FDA writes it: `K983071`, `DEN150058`, `P010012`. */
  id: string;
  /** Where the number starts and ends in the text. */
  start: number;
  end: number;
};

const DIGITISH = '[0-9OoIl|]';
/**
 * K or DEN, then at most one separator, then six digit-like characters with single spaces allowed between them, and
 * no digit after. A K glued to a preceding word (`AnalyzerK151809`) counts only when its digits follow at once.
 */
const K_OR_DEN = new RegExp(
  `(?:(?<![A-Za-z0-9])(K|DEN)\\s?[-#:.]?\\s?|(?<=[a-z)])(K))(${DIGITISH}(?: ?${DIGITISH}){5})(?![0-9])`,
  'gi',
);
/** PMA numbers are never OCR-repaired: a bare P followed by digits is too common in tables of figures. */
const PMA = /(?<![A-Za-z0-9])P(\d{6})(?![0-9])/g;

const FIX: Record<string, string> = { O: '0', o: '0', I: '1', l: '1', '|': '1' };

export function findNumbers(text: string): NumberHit[] {
  const hits: NumberHit[] = [];
  for (const m of text.matchAll(K_OR_DEN)) {
    const letters = (m[1] ?? m[2] ?? '').toUpperCase();
    if (letters !== 'K' && letters !== 'DEN') continue;
    const body = (m[3] ?? '').replace(/ /g, '');
    const realDigits = body.replace(/[^0-9]/g, '').length;
    if (realDigits < 5) continue;
    const digits = [...body].map((c) => FIX[c] ?? c).join('');
    // A lower-case `den` is a word ending (e.g. "Golden 123456"), never a De Novo number.
    if (letters === 'DEN' && !/^DEN/.test(m[0])) continue;
    hits.push({ id: letters + digits, start: m.index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(PMA)) hits.push({ id: `P${m[1]}`, start: m.index, end: m.index + m[0].length });
  return hits.sort((a, b) => a.start - b.start);
}

/** A device id from a file name or user input: `k050278.pdf` → `K050278`; null when it is none. */
export function deviceIdOf(name: string): string | null {
  const m = /^(K|DEN|P)(\d{6})$/i.exec(name.replace(/\.(pdf|txt|md)$/i, ''));
  return m ? `${(m[1] as string).toUpperCase()}${m[2]}` : null;
}
