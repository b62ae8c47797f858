import { ExportInput } from '../contract/index.ts';
import { ApiError } from '../operations/errors.ts';
import { exportFileName } from '../operations/csv-format.ts';
import { prepareExport, type ExportOptions } from '../operations/export.ts';
import { parseSearchQuery } from '../operations/search-query.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { issuesToDetails, ruleOf, sentenceOf } from './issues.ts';

/**
 * GET /v1/export below the HTTP layer, the same for every host (the Node server, the Worker): the request's URL in,
 * the headers and the body's chunks out. Each host streams the chunks its own way, with its own back-pressure.
 */
export type ExportAnswer = { headers: Record<string, string>; chunks: AsyncIterable<Uint8Array> };

/** Query parameters that hold integers; anything else that does not look like one is left for the schema to refuse. */
const INTEGER_PARAMS = new Set(['yearFrom', 'yearTo', 'limit']);
const NULLABLE_PARAMS = ['applicant', 'productCode', 'yearFrom', 'yearTo', 'limit', 'cursor', 'after'];

/**
 * The request's query string as the input ExportInput validates: absent optional parameters are null. Every name
 * becomes an own member of an object without a prototype, so that the schema sees each one, and refuses those it does
 * not list: assigned to a plain object, `__proto__` would set its prototype and vanish from the input.
 */
export function exportInputOf(url: string): Record<string, unknown> {
  const params = new URL(url, 'http://x').searchParams;
  const input = Object.create(null) as Record<string, unknown>;
  const put = (name: string, value: unknown) => Object.defineProperty(input, name, { value, enumerable: true, writable: true, configurable: true });
  put('query', '');
  put('format', 'csv');
  for (const name of NULLABLE_PARAMS) put(name, null);
  for (const [name, value] of params) put(name, INTEGER_PARAMS.has(name) && /^-?\d{1,15}$/.test(value) ? Number(value) : value);
  return input;
}

/** `exportInputOf`'s input checked against ExportInput: invalid_input naming each parameter and its rule. */
export function checkedExportInput(input: Record<string, unknown>, route: string): ExportInput & { parsed: ReturnType<typeof parseSearchQuery> } {
  const parsed = ExportInput.safeParse(input, { error: ruleOf });
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error.issues, 'query', route).map((d) => ({ ...d, path: d.path.replace(/^query\./, '') }));
    throw new ApiError('invalid_input', sentenceOf(details), { details });
  }
  // The query is parsed once, here where it enters, and its parse travels down to the engine.
  return { ...parsed.data, parsed: parseSearchQuery(parsed.data.query, 'query') };
}

/**
 * Checks the request and prepares its export: throws the contract's ApiError (invalid_input, invalid_cursor,
 * source_unavailable) before any byte is sent. `url` is the request's path and query string (or a whole URL).
 * The headers say the total, this part's count and, when `limit` cut the part short, the cursor of the next one
 * (X-Next-Cursor and a Link rel="next").
 */
export async function answerExport(url: string, snapshot: Snapshot | null, options: ExportOptions = {}): Promise<ExportAnswer> {
  const input = checkedExportInput(exportInputOf(url), 'GET /v1/export');
  if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet.');
  const prepared = await prepareExport(input, snapshot, options);
  const extension = input.format === 'csv' ? 'csv' : 'ndjson';
  const headers: Record<string, string> = {
    'Content-Type': prepared.contentType,
    // The name says the search, as the static page names the file it builds (csv-format.ts).
    'Content-Disposition': `attachment; filename="${exportFileName(input, snapshot.id, extension)}"`,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'X-Total-Count, X-Export-Count, X-Next-Cursor, X-Snapshot-Token, Link',
    'Cache-Control': 'no-store',
    'X-Total-Count': String(prepared.total),
    'X-Export-Count': String(prepared.count),
    'X-Snapshot-Token': snapshot.id,
  };
  if (prepared.nextCursor !== null) {
    const next = new URL(url, 'http://x');
    next.searchParams.delete('after');
    next.searchParams.set('cursor', prepared.nextCursor);
    headers['X-Next-Cursor'] = prepared.nextCursor;
    headers.Link = `<${next.pathname}${next.search}>; rel="next"`;
  }
  return { headers, chunks: prepared.chunks };
}
