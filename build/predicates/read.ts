import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { deviceIdOf } from './numbers.ts';
import { pdfText } from './pdf.ts';

/** Whether a device's summary was found and read: the report's status column. */
export type ReadStatus = 'read' | 'no-text' | 'unreadable' | 'missing';
export type ReadSummary = { status: 'read'; text: string } | { status: Exclude<ReadStatus, 'read'>; reason: string };

/** The summary files of a folder: one per device, named by its number (`K123456.pdf`, `.txt` or `.md`). */
export type SummaryFile = { device: string; path: string; kind: 'pdf' | 'txt' | 'md' };

/** A text file larger than this is no 510(k) summary (the largest seen is a few hundred kB). */
const MAX_TEXT_BYTES = 16 * 1024 * 1024;
/** A PDF larger than this is not parsed (FDA's summaries are at most a few MB). */
export const MAX_PDF_BYTES = 64 * 1024 * 1024;

/**
 * The folder's summary files, and the names it holds that are none (reported, never dropped silently). When a device
 * has several files, a PDF wins over text (it is FDA's own document), then `.txt` over `.md`.
 */
export async function listSummaries(dir: string): Promise<{ files: SummaryFile[]; skipped: string[] }> {
  const names = (await readdir(dir)).sort();
  const byDevice = new Map<string, SummaryFile>();
  const skipped: string[] = [];
  const rank = { pdf: 0, txt: 1, md: 2 } as const;
  for (const name of names) {
    const ext = /\.(pdf|txt|md)$/i.exec(name)?.[1]?.toLowerCase() as SummaryFile['kind'] | undefined;
    const device = ext ? deviceIdOf(name) : null;
    if (!ext || !device) {
      skipped.push(name);
      continue;
    }
    const prior = byDevice.get(device);
    if (prior && rank[prior.kind] <= rank[ext]) {
      skipped.push(name);
      continue;
    }
    if (prior) skipped.push(prior.path.slice(dir.length + 1));
    byDevice.set(device, { device, path: join(dir, name), kind: ext });
  }
  return { files: [...byDevice.values()].sort((a, b) => a.device.localeCompare(b.device)), skipped };
}

export async function readSummary(file: SummaryFile): Promise<ReadSummary> {
  let size: number;
  try {
    size = (await stat(file.path)).size;
  } catch (err) {
    return { status: 'missing', reason: `cannot read ${file.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  if (size > (file.kind === 'pdf' ? MAX_PDF_BYTES : MAX_TEXT_BYTES)) return { status: 'unreadable', reason: `file is ${size} bytes, more than a summary can be` };
  const bytes = await readFile(file.path);
  return summaryFromBytes(bytes, file.kind);
}

/** A summary's text from its bytes: a PDF's text layer, or text decoded as UTF-8. */
export async function summaryFromBytes(bytes: Uint8Array, kind: SummaryFile['kind']): Promise<ReadSummary> {
  if (kind === 'pdf') {
    const pdf = await pdfText(bytes);
    if (pdf.status === 'read') return { status: 'read', text: pdf.text };
    if (pdf.status === 'no-text') return { status: 'no-text', reason: `no text layer on its ${pdf.pages} page(s): a scan` };
    return { status: 'unreadable', reason: `not a readable PDF: ${pdf.reason}` };
  }
  const text = new TextDecoder('utf-8').decode(bytes);
  if (text.replace(/[^A-Za-z0-9]/g, '').length === 0) return { status: 'no-text', reason: 'the file holds no text' };
  return { status: 'read', text };
}
