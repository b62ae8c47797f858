/**
 * pdf.js is loaded on the first PDF read, not with this module: it adds some 150 MiB and seconds to a process that
 * imports it, and most runs of the sync (and every failed one) read no PDF at all.
 */
let pdfjs: Promise<typeof import('pdfjs-dist/legacy/build/pdf.mjs')> | null = null;
const loadPdfjs = () => (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

/** What a PDF's text layer holds: its text, or why there is none. */
export type PdfText = { status: 'read'; text: string; pages: number } | { status: 'no-text'; pages: number } | { status: 'unreadable'; reason: string };

/** Fewer letters and digits than this on every page together: a scan without a text layer (or a blank form). */
const MIN_TEXT_CHARS = 40;

type TextItem = { str: string; hasEOL?: boolean; transform?: number[] };

/**
 * The text of a PDF, line by line as pdf.js lays it out (a new line where an item ends one or the baseline moves).
 * Never throws: a damaged or encrypted file is `unreadable` with pdf.js's reason, one with no text `no-text`.
 */
export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  const { getDocument } = await loadPdfjs();
  let doc;
  try {
    // pdf.js takes ownership of the buffer it is given: pass a copy so the caller's bytes stay intact.
    doc = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, useSystemFonts: false, verbosity: 0 }).promise;
  } catch (err) {
    return { status: 'unreadable', reason: err instanceof Error ? err.message : String(err) };
  }
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      let lastY: number | null = null;
      const lines: string[] = [];
      for (const raw of content.items) {
        const item = raw as TextItem;
        if (typeof item.str !== 'string') continue;
        const y = item.transform?.[5] ?? null;
        if (lastY !== null && y !== null && Math.abs(y - lastY) > 2 && line !== '') {
          lines.push(line);
          line = '';
        }
        line += line !== '' && item.str !== '' && !line.endsWith(' ') ? ` ${item.str}` : item.str;
        if (y !== null) lastY = y;
        if (item.hasEOL) {
          lines.push(line);
          line = '';
          lastY = null;
        }
      }
      if (line !== '') lines.push(line);
      pages.push(lines.join('\n'));
      page.cleanup();
    }
    const text = pages.join('\n');
    if (text.replace(/[^A-Za-z0-9]/g, '').length < MIN_TEXT_CHARS) return { status: 'no-text', pages: doc.numPages };
    return { status: 'read', text, pages: doc.numPages };
  } catch (err) {
    return { status: 'unreadable', reason: err instanceof Error ? err.message : String(err) };
  } finally {
    await doc.destroy();
  }
}
