import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  ErrorBody,
  LAYOUT,
  ProductCodeShard,
  RecordShard,
  ResponseSchemas,
  ShardIndex,
  type ClearanceRecord,
  type ErrorCode,
  type OperationName,
  type ProductCodeEntry,
} from '../../src/contract/index.ts';
import { createApp, type App, type AppOptions } from '../../src/server/app.ts';
import type { Logger, RequestLine } from '../../src/server/log.ts';

/** A logger that keeps what it is given, for tests that check the logs. */
export function memoryLogger(): Logger & { requests: RequestLine[]; infos: string[]; errors: { message: string; fields?: Record<string, unknown> }[] } {
  const requests: RequestLine[] = [];
  const infos: string[] = [];
  const errors: { message: string; fields?: Record<string, unknown> }[] = [];
  return {
    requests,
    infos,
    errors,
    request: (l) => requests.push(l),
    info: (m) => infos.push(m),
    error: (message, fields) => errors.push({ message, fields }),
  };
}

export type Running = { app: App; url: string; logger: ReturnType<typeof memoryLogger>; close: () => Promise<void> };

/** Starts the real server on a free port of 127.0.0.1. */
export async function startServer(options: Partial<AppOptions> & { snapshotPath: string }): Promise<Running> {
  const logger = memoryLogger();
  const app = await createApp({ syncStatePath: null, publicDir: null, pollMs: 0, watch: false, logger, ...options });
  const { url } = await app.listen(0, '127.0.0.1');
  return { app, url, logger, close: () => app.close({ graceMs: 2000 }) };
}

export type Answer = { status: number; headers: Headers; text: string; json: unknown };

/** POSTs a body to /v1/query; `body` is sent as JSON unless it is already a string or bytes. */
export async function post(url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Answer> {
  const payload: string | Blob =
    typeof body === 'string' ? body : body instanceof Uint8Array ? new Blob([new Uint8Array(body)]) : JSON.stringify(body);
  const res = await fetch(`${url}/v1/query`, { method: 'POST', headers, body: payload });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const envelope = (operation: string, input: unknown) => ({ version: 1, operation, input });

export const ask = (url: string, operation: OperationName, input: unknown) => post(url, envelope(operation, input));

/** A valid input for every operation. */
export const VALID_INPUT: Record<OperationName, Record<string, unknown>> = {
  'device-510k.search': { query: 'pacemaker', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 },
  'device-510k.detail': { id: 'K000000' },
  'device-510k.classification': { productCode: 'DXY' },
  'device-510k.top-product-codes': { limit: 5 },
  'device-510k.catalog': { kind: 'clearance', limit: 10, cursor: null },
  'device-510k.meta': {},
  // A device of the fixture's edge files (test/fixtures/fda/predicates), with a record.
  'device-510k.lineage': { id: 'K875083', direction: 'predicates', depth: 1, kinds: null, limit: 10, cursor: null },
};

/** Headers every JSON answer carries (docs/contract.md section 1). */
export function expectJsonHeaders(headers: Headers): void {
  expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(headers.get('access-control-allow-origin')).toBe('*');
}

/**
 * The canonical error shape (docs/contract.md section 2), checked the same way for every error case: status, headers,
 * the ErrorBody schema, the code, the operation, and a message that is one plain sentence with no stack or path.
 */
export function expectError(answer: Answer, status: number, code: ErrorCode, operation: string | null = null): ErrorBody {
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status });
  expectJsonHeaders(answer.headers);
  const parsed = ErrorBody.safeParse(answer.json);
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true);
  const body = parsed.data as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(body.operation).toBe(operation);
  expect(body.error.message).toMatch(/^[^\n]+$/);
  expect(body.error.message).not.toMatch(/\bat .+:\d+:\d+|node_modules|\/src\/|\/tmp\/|\.ts\b/);
  if (code === 'source_unavailable') expect(body.sourceState.availability).toBe('unavailable');
  return body;
}

/** A success answer parsed with the contract's response schema for its operation. */
export function expectOk<N extends OperationName>(answer: Answer, operation: N) {
  expect({ status: answer.status, text: answer.text.slice(0, 500) }).toMatchObject({ status: 200 });
  expectJsonHeaders(answer.headers);
  const parsed = ResponseSchemas[operation].safeParse(answer.json);
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 3))).toBe(true);
  return parsed.data as ReturnType<(typeof ResponseSchemas)[N]['parse']>;
}

/** Every record of a snapshot, read from its shard files (what the build wrote), kNumber ascending. */
export async function allRecords(snapshotPath: string): Promise<ClearanceRecord[]> {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.recordIndex), 'utf8')));
  const out: ClearanceRecord[] = [];
  for (const s of index.shards) out.push(...RecordShard.parse(JSON.parse(await readFile(join(snapshotPath, s.path), 'utf8'))));
  return out;
}

export async function allProductCodes(snapshotPath: string): Promise<ProductCodeEntry[]> {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.productCodeIndex), 'utf8')));
  const out: ProductCodeEntry[] = [];
  for (const s of index.shards) out.push(...ProductCodeShard.parse(JSON.parse(await readFile(join(snapshotPath, s.path), 'utf8'))));
  return out;
}

/** A raw HTTP request, with the path sent exactly as given (no normalization) and the body left compressed. */
export function rawRequest(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
