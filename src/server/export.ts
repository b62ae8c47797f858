import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ExportInput } from '../contract/index.ts';
import { ApiError } from '../operations/errors.ts';
import { prepareExport } from '../operations/export.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { issuesToDetails, ruleOf, sentenceOf } from '../api/issues.ts';

export type ExportDeps = {
  current: () => Snapshot | null;
  fail: (req: IncomingMessage, res: ServerResponse, err: unknown, snapshot?: Snapshot | null) => Promise<void> | void;
};

/** Query parameters that hold integers; anything else that does not look like one is left for the schema to refuse. */
const INTEGER_PARAMS = new Set(['yearFrom', 'yearTo', 'limit']);
const NULLABLE_PARAMS = ['applicant', 'productCode', 'yearFrom', 'yearTo', 'limit', 'cursor', 'after'];

/** The request's query string as the input ExportInput validates: absent optional parameters are null. */
export function exportInputOf(url: string): Record<string, unknown> {
  const params = new URL(url, 'http://x').searchParams;
  const input: Record<string, unknown> = { query: '', format: 'csv' };
  for (const name of NULLABLE_PARAMS) input[name] = null;
  for (const [name, value] of params) {
    input[name] = INTEGER_PARAMS.has(name) && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
  }
  return input;
}

/**
 * GET /v1/export: every match of a search, streamed as CSV or NDJSON with back-pressure (a slow reader holds one
 * batch, never the set). The headers say the total, this part's count and, when `limit` cut the part short, the
 * cursor of the next one (X-Next-Cursor and a Link rel="next"). An error before the first byte is the usual JSON
 * error; after it, the connection is cut, so a truncated file never looks complete.
 */
export function exportHandler(deps: ExportDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const snapshot = deps.current();
    try {
      const parsed = ExportInput.safeParse(exportInputOf(req.url ?? ''), { error: ruleOf });
      if (!parsed.success) {
        const details = issuesToDetails(parsed.error.issues, 'query', 'GET /v1/export').map((d) => ({ ...d, path: d.path.replace(/^query\./, '') }));
        throw new ApiError('invalid_input', sentenceOf(details), { details });
      }
      if (!snapshot) throw new ApiError('source_unavailable', 'No valid snapshot is loaded yet.');
      const prepared = await prepareExport(parsed.data, snapshot);
      const extension = parsed.data.format === 'csv' ? 'csv' : 'ndjson';
      const headers: Record<string, string> = {
        'Content-Type': prepared.contentType,
        'Content-Disposition': `attachment; filename="device-510k-${snapshot.id}.${extension}"`,
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Expose-Headers': 'X-Total-Count, X-Export-Count, X-Next-Cursor, X-Snapshot-Token, Link',
        'Cache-Control': 'no-store',
        'X-Total-Count': String(prepared.total),
        'X-Export-Count': String(prepared.count),
        'X-Snapshot-Token': snapshot.id,
      };
      if (prepared.nextCursor !== null) {
        const next = new URL(req.url ?? '', 'http://x');
        next.searchParams.delete('after');
        next.searchParams.set('cursor', prepared.nextCursor);
        headers['X-Next-Cursor'] = prepared.nextCursor;
        headers.Link = `<${next.pathname}${next.search}>; rel="next"`;
      }
      res.writeHead(200, headers);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      for await (const chunk of prepared.chunks) {
        if (res.destroyed) return;
        if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      res.end();
    } catch (err) {
      await deps.fail(req, res, err, snapshot);
    }
  };
}
