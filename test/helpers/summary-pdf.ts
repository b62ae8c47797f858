import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A PDF with a text layer holding `text`, line by line, long lines wrapped, made with pdf-lib's standard Helvetica:
 * what a 510(k) summary's text becomes when FDA's PDF is read, with no table markup. Characters the font cannot
 * draw become `?`, as a PDF's unmapped glyphs do.
 */
export async function summaryPdf(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const size = 9;
  const width = 612 - 2 * 40;
  const canDraw = new Map<string, boolean>();
  const drawable = (s: string) =>
    [...s]
      .map((c) => {
        let ok = canDraw.get(c);
        if (ok === undefined) {
          try {
            font.encodeText(c);
            ok = true;
          } catch {
            ok = false;
          }
          canDraw.set(c, ok);
        }
        return ok ? c : '?';
      })
      .join('');
  const lines: string[] = [];
  for (const raw of text.split('\n')) {
    let line = '';
    for (const word of drawable(raw).split(' ')) {
      const next = line === '' ? word : `${line} ${word}`;
      if (line !== '' && font.widthOfTextAtSize(next, size) > width) {
        lines.push(line);
        line = word;
      } else line = next;
    }
    lines.push(line);
  }
  const perPage = 70;
  for (let i = 0; i < lines.length; i += perPage) {
    const page = doc.addPage([612, 792]);
    lines.slice(i, i + perPage).forEach((line, n) => {
      if (line.trim() !== '') page.drawText(line, { x: 40, y: 752 - n * 10.5, size, font });
    });
  }
  return doc.save({ useObjectStreams: false });
}

/**
 * The 510(k) summaries with FDA's own statement of their predicates (`summaries/text/K*.md` and `truth.json`),
 * shipped beside the repository as shared data; null when they are absent (tests then skip, saying so).
 */
export function summariesDir(): string | null {
  for (const up of ['..', '../..']) {
    const dir = join(ROOT, up, 'shared/data/fda/summaries');
    if (existsSync(join(dir, 'truth.json'))) return dir;
  }
  return null;
}

export function readTruth(dir: string): Map<string, string[]> {
  const json = JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')) as { predicates: Record<string, string[]> };
  return new Map(Object.entries(json.predicates));
}
