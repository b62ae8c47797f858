import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ERROR_STATUS,
  ErrorBody,
  OPERATION_NAMES,
  OPERATIONS,
  ResponseSchemas,
  isOperationName,
  type ClearanceRecord,
  type ErrorCode,
  type OperationName,
  type ProductCodeEntry,
} from '../../src/contract/index.ts';
import { CursorCodec, JsonBytes, OPERATION_REGISTRY, type OperationRegistry } from '../../src/operations/index.ts';
import { checkEnvelope, knownOperationOf, parseInput, parseJsonBody } from '../../src/api/envelope.ts';
import { ApiError } from '../../src/api/errors.ts';
import { MAX_BODY_BYTES } from '../../src/api/body.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { type Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, envelope, rawRequest, startServer, type Running } from '../server/helpers.ts';
import { SEED, figure } from './helpers.ts';

/**
 * Random and adversarial requests: whatever arrives gets either a valid answer or the canonical error body with the
 * contract's status, never a 500 and never a hang. Run twice: in process over the request pipeline and the real
 * operations (thousands of cases, cheap), and over HTTP against the real server (fewer, end to end). Seeds are
 * fixed, so a failure replays; fast-check prints the shrunk counterexample.
 */
let server: Running;
let snapshot: Snapshot;
let operations: OperationRegistry;
const cursors = new CursorCodec();
let records: Map<string, ClearanceRecord>;
let codes: Map<string, ProductCodeEntry>;
let kNumbers: string[];
let codeList: string[];
let words: string[];
let applicants: string[];
let realCursors: string[];
let inProcessCases = 0;
let httpCases = 0;
/** How the cases were answered, by status and code: shows the fuzzing reaches the operations, not just the parser. */
const tally = new Map<string, number>();
const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);

beforeAll(async () => {
  const path = await buildFixtureSnapshot();
  snapshot = await openSnapshotDirectory(path);
  operations = OPERATION_REGISTRY;
  server = await startServer({ snapshotPath: path });
  const all = await allRecords(path);
  records = new Map(all.map((r) => [r.kNumber, r]));
  codes = new Map((await allProductCodes(path)).map((e) => [e.productCode, e]));
  kNumbers = [...records.keys()];
  codeList = [...codes.keys()];
  words = [...new Set(all.flatMap((r) => `${r.deviceName} ${r.applicant ?? ''}`.toLowerCase().split(/\W+/)).filter((w) => w.length > 2))].slice(0, 200);
  applicants = [...new Set(all.map((r) => r.applicant).filter((a): a is string => a !== null))].slice(0, 100);
  realCursors = [];
  for (const kind of ['clearance', 'product-code'] as const) {
    for (const limit of [1, 7, 50]) {
      const first = await operations['device-510k.catalog'].handler(
        operations['device-510k.catalog'].prepare?.({ kind, limit, cursor: null }, { cursors }),
        { snapshot, servedAt: new Date(), cursors },
      );
      if (first.page?.nextCursor) realCursors.push(first.page.nextCursor);
    }
  }
});
afterAll(async () => {
  await server?.close();
  figure('fuzz cases tried in process', inProcessCases);
  figure('fuzz cases tried over HTTP', httpCases);
  figure('fuzz cases tried in all', inProcessCases + httpCases);
  figure('fuzz answers by outcome', [...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', '));
});

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'K123456\u0000',
  '\u0000K123456',
  ' k123456 ',
  'K１２３４５６',
  'Ｋ123456',
  'K123456\n',
  '\u202eK123456',
  'K12345',
  'K1234567',
  'K-123456',
  '../',
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f',
  'records/K12345.json',
  '/etc/passwd',
  'K123456/../../manifest.json',
  'file:///etc/passwd',
  'DXY\u0000',
  'dxy',
  'DX',
  'DXYZ',
  'İİİ',
  'ǅXY',
  'ß',
  'ﬀﬀ',
  '𝒦𝒦𝒦',
  '😀😀😀',
  '\ud800',
  '\udfff\ud800',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '${process.env}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'toString',
  '\u00a0K123456\u00a0',
  '\t\r\n',
  'e\u0301',
  'x'.repeat(2048),
  'é'.repeat(2049),
  '😀'.repeat(2048),
  'x'.repeat(20_000),
];

const NASTY_NUMBERS = [0, -0, 1, -1, 0.5, 1.5, 1e21, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 1900, 9999, 10_000, 1899, 50, 51, 100, 101, 500, 501];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
);
const nastyNumber = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.integer(), fc.double());
const deepArray = fc.integer({ min: 1, max: 3000 }).map((d) => JSON.parse('['.repeat(d) + ']'.repeat(d)) as unknown);
const deepObject = fc.integer({ min: 1, max: 1000 }).map((d) => JSON.parse('{"a":'.repeat(d) + '1' + '}'.repeat(d)) as unknown);

/** Any JSON value, leaning towards the kinds of wrong that a schema might let through. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': null }, ['K123456'], { id: 'K123456' }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }) },
  { weight: 1, arbitrary: deepArray },
  { weight: 1, arbitrary: deepObject },
);

/** Values each field accepts, drawn from the snapshot's own records so that answers are not all empty. */
function validFields(operation: OperationName): Record<string, fc.Arbitrary<unknown>> {
  switch (operation) {
    case 'device-510k.search':
      return {
        query: fc.oneof(
          fc.constant(''),
          fc.constantFrom(...words).chain((w) => fc.constantFrom(w, w.slice(0, 3), w.toUpperCase(), `  ${w}  `)),
          fc.tuple(fc.constantFrom(...words), fc.constantFrom(...words)).map(([a, b]) => `${a} ${b}`),
          fc.constantFrom(...kNumbers, ...codeList),
        ),
        applicant: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...applicants).map((a) => ` ${a.toLowerCase()} `) }),
        productCode: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...codeList) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{3}$/) }),
        yearFrom: fc.oneof(fc.constant(null), fc.integer({ min: 1900, max: 2030 })),
        yearTo: fc.oneof(fc.constant(null), fc.integer({ min: 1970, max: 9999 })),
        page: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 ** 40 }) }),
        pageSize: fc.integer({ min: 1, max: 50 }),
      };
    case 'device-510k.detail':
      return {
        id: fc.oneof(
          fc.constantFrom(...kNumbers).chain((k) => fc.constantFrom(k, k.toLowerCase(), ` ${k}\t`)),
          fc.integer({ min: 0, max: 999_999 }).map((n) => `K${String(n).padStart(6, '0')}`),
        ),
      };
    case 'device-510k.classification':
      return { productCode: fc.oneof(fc.constantFrom(...codeList).chain((c) => fc.constantFrom(c, c.toLowerCase())), fc.stringMatching(/^[A-Za-z]{3}$/)) };
    case 'device-510k.top-product-codes':
      return { limit: fc.integer({ min: 1, max: 100 }) };
    case 'device-510k.catalog':
      return {
        kind: fc.constantFrom('clearance', 'product-code'),
        limit: fc.integer({ min: 1, max: 500 }),
        cursor: fc.oneof(fc.constant(null), fc.constantFrom(...realCursors)),
      };
    case 'device-510k.meta':
      return {};
    case 'device-510k.lineage':
      return {
        id: fc.oneof(fc.constantFrom(...kNumbers), fc.integer({ min: 0, max: 999_999 }).map((n) => `K${String(n).padStart(6, '0')}`)),
        direction: fc.constantFrom('predicates', 'descendants'),
        depth: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 50 })),
        kinds: fc.constantFrom(null, ['named'], ['predicate'], ['predicate', 'named']),
        limit: fc.integer({ min: 1, max: 500 }),
        cursor: fc.constant(null),
      };
  }
}

/** Wrong values aimed at each field's rule, on top of the generic ones. */
function wrongFields(operation: OperationName): Record<string, fc.Arbitrary<unknown>> {
  const year = fc.oneof(fc.integer({ min: -10, max: 1899 }), fc.integer({ min: 10_000, max: 2 ** 31 }), nastyNumber);
  switch (operation) {
    case 'device-510k.search':
      return { query: nastyString, applicant: nastyString, productCode: nastyString, yearFrom: year, yearTo: year, page: fc.oneof(fc.integer({ max: 0 }), nastyNumber), pageSize: fc.oneof(fc.integer({ min: 51 }), nastyNumber) };
    case 'device-510k.detail':
      return { id: nastyString };
    case 'device-510k.classification':
      return { productCode: nastyString };
    case 'device-510k.top-product-codes':
      return { limit: nastyNumber };
    case 'device-510k.catalog':
      return {
        kind: nastyString,
        limit: nastyNumber,
        cursor: fc.oneof(
          fc.tuple(fc.constantFrom(...realCursors), fc.nat(), fc.constantFrom('A', '_', '-', '')).map(([c, i, ch]) => {
            const at = i % c.length;
            return c.slice(0, at) + ch + c.slice(at + 1);
          }),
          fc.constantFrom(...realCursors).map((c) => c.slice(0, -2)),
          fc.constant(new CursorCodec('another secret').encode({ v: 1, k: 'clearance', a: 'K000000', s: '0123456789abcdef' })),
          nastyString,
        ),
      };
    case 'device-510k.meta':
      return {};
    case 'device-510k.lineage':
      return { id: nastyString, direction: nastyString, depth: fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 51 }), nastyNumber), kinds: nastyValue, limit: nastyNumber, cursor: nastyString };
  }
}

/**
 * An input for `operation`: half the time every field valid (to reach deep into the operation), otherwise each
 * field valid, wrong for its rule, of any JSON kind, or missing, and now and then a field that is not listed.
 */
function inputFor(operation: OperationName): fc.Arbitrary<Record<string, unknown>> {
  const valid = validFields(operation);
  const wrong = wrongFields(operation);
  const keys = Object.keys(valid);
  const allValid = fc.tuple(...keys.map((k) => (valid[k] as fc.Arbitrary<unknown>).map((v) => [k, v] as const)));
  const mixed = fc.tuple(
    ...keys.map((k) =>
      fc.oneof(
        { weight: 5, arbitrary: (valid[k] as fc.Arbitrary<unknown>).map((v) => [k, v] as const) },
        { weight: 2, arbitrary: (wrong[k] as fc.Arbitrary<unknown>).map((v) => [k, v] as const) },
        { weight: 1, arbitrary: nastyValue.map((v) => [k, v] as const) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
    ),
  );
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'extra', 'Query', ''), fc.string({ maxLength: 8 })), nastyValue) },
  );
  return fc.tuple(fc.oneof(allValid, mixed), extra).map(([pairs, more]) => {
    const input: Record<string, unknown> = {};
    // defineProperty, so that a key such as __proto__ becomes a member as it would from JSON.parse.
    const set = (k: string, v: unknown) => Object.defineProperty(input, k, { value: v, enumerable: true, writable: true, configurable: true });
    for (const pair of pairs) if (pair) set(pair[0], pair[1]);
    if (more) set(more[0], more[1]);
    return input;
  });
}

const operationName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...OPERATION_NAMES) }, { weight: 1, arbitrary: nastyString });

/** An envelope for an operation, its members now and then wrong, missing or joined by others. */
const envelopeValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(...OPERATION_NAMES), fc.integer({ min: 0, max: 9 }), nastyValue, operationName, fc.constantFrom('version', 'operation', 'input'))
  .chain(([op, mode, wrong, otherOp, member]) =>
    inputFor(op).map((input) => {
      const e: Record<string, unknown> = { version: 1, operation: op, input };
      if (mode === 1) e.version = wrong;
      if (mode === 2) e.operation = otherOp;
      if (mode === 3) e.input = wrong;
      if (mode === 4) delete e[member];
      if (mode === 5) e.extra = wrong;
      return e;
    }),
  );

/** Any body at all: JSON of any shape, envelopes, and raw text that is almost JSON. */
const TEXT_EDITS = [
  (s: string) => s.replace(/:1,/, ':1e999,'),
  (s: string) => s.replace(/:1,/, ':-0,'),
  (s: string) => s.replace(/:1,/, ':1.0,'),
  (s: string) => s.replace(/:1,/, ':123456789012345678901234567890,'),
  (s: string) => s.replace(/:1,/, ':0x1,'),
  (s: string) => s.replace(/^\{/, '{"version":2,'),
  (s: string) => `\ufeff${s}`,
  (s: string) => `${s}\u0000`,
  (s: string) => `${s}garbage`,
  (s: string) => s.replace(/"input":/, '"input":{},"input":'),
  (s: string) => s.replace(/"/, "'"),
  (s: string) => s.slice(0, Math.floor(s.length / 2)),
  (s: string) => s.replace(/"([a-z]+)"/, '"\\u0000$1"'),
  (s: string) => s.replace(/device-510k/, 'device-510k\\ud800'),
  (s: string) => `${'['.repeat(20_000)}${s}${']'.repeat(20_000)}`,
  (s: string) => `${' '.repeat(MAX_BODY_BYTES)}${s}`,
];
const bodyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: envelopeValue.map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 2, arbitrary: fc.tuple(envelopeValue, fc.constantFrom(...TEXT_EDITS)).map(([v, edit]) => edit(JSON.stringify(v))) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
);

// ---------------------------------------------------------------------------------------------------------------
// Checks

type Outcome = { ok: true; operation: OperationName; data: unknown; page?: unknown; facets?: unknown } | { ok: false; error: ApiError; operation: string | null };

/**
 * The query pipeline in process: the same functions, in the same order, as the server's handler (the HTTP-only
 * checks aside: size, content type, snapshot presence). Anything thrown that is not an ApiError is a bug.
 */
async function answerInProcess(body: Uint8Array): Promise<Outcome> {
  let operation: string | null = null;
  try {
    const value = parseJsonBody(body);
    operation = knownOperationOf(value);
    const env = checkEnvelope(value);
    const op = operations[env.operation];
    const input = parseInput(op.input, env.input, env.operation);
    const prepared = op.prepare ? op.prepare(input, { cursors }) : input;
    const result = await op.handler(prepared, { snapshot, servedAt: new Date(), cursors });
    return { ok: true, operation: env.operation, data: result.data instanceof JsonBytes ? result.data.toJSON() : result.data, page: result.page, facets: result.facets instanceof JsonBytes ? result.facets.toJSON() : result.facets };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: err, operation };
    throw err;
  }
}

const CLIENT_ERRORS = new Set<ErrorCode>(['malformed_json', 'invalid_request', 'unsupported_version', 'unknown_operation', 'invalid_input', 'invalid_cursor', 'record_not_found', 'product_code_not_found']);

/** What the snapshot's own files say the answer must be, for the operations where that is cheap to know. */
function expectMatchesTruth(body: unknown, outcome: Outcome): void {
  if (typeof body !== 'object' || body === null || (body as { version?: unknown }).version !== 1) return;
  const { operation, input } = body as { operation?: unknown; input?: unknown };
  if (outcome.ok) expectOkMatchesTruth(outcome, input as Record<string, unknown>);
  if (typeof input !== 'object' || input === null || Array.isArray(input) || Object.keys(input).length !== 1) return;
  const value = (input as Record<string, unknown>)[operation === 'device-510k.detail' ? 'id' : 'productCode'];
  if (operation === 'device-510k.detail' && typeof value === 'string' && 'id' in input) {
    const id = /^\s*[Kk]\d{6}\s*$/.test(value) ? value.trim().toUpperCase() : null;
    if (id === null) expect(outcome.ok ? 'ok' : outcome.error.code).toBe('invalid_input');
    else if (records.has(id)) expect(outcome.ok && (outcome.data as { record: ClearanceRecord }).record).toEqual(records.get(id));
    else expect(outcome.ok ? 'ok' : outcome.error.code).toBe('record_not_found');
  }
  if (operation === 'device-510k.classification' && typeof value === 'string' && 'productCode' in input) {
    const code = /^[A-Za-z]{3}$/.test(value) ? value.toUpperCase() : null;
    if (code === null) expect(outcome.ok ? 'ok' : outcome.error.code).toBe('invalid_input');
    else if (codes.has(code)) expect(outcome.ok && (outcome.data as { productCode: string }).productCode).toBe(code);
    else expect(outcome.ok ? 'ok' : outcome.error.code).toBe('product_code_not_found');
  }
}

/** A valid answer holds the snapshot's own entries, in the contract's order, within the filters asked for. */
function expectOkMatchesTruth(outcome: Outcome & { ok: true }, input: Record<string, unknown>): void {
  if (outcome.operation === 'device-510k.search') {
    const items = (outcome.data as { items: ClearanceRecord[] }).items;
    for (const item of items) expect(item).toEqual(records.get(item.kNumber));
    expect(items.length).toBeLessThanOrEqual(input.pageSize as number);
    const page = outcome.page as { total: number; itemsReturned: number };
    expect(page.itemsReturned).toBe(items.length);
    expect(page.total).toBeGreaterThanOrEqual(items.length);
    if (typeof input.productCode === 'string') for (const item of items) expect(item.productCode).toBe(input.productCode.toUpperCase());
    const year = (r: ClearanceRecord) => Number(r.decisionDate?.slice(0, 4));
    if (typeof input.yearFrom === 'number') for (const item of items) expect(year(item)).toBeGreaterThanOrEqual(input.yearFrom);
    if (typeof input.yearTo === 'number') for (const item of items) expect(year(item)).toBeLessThanOrEqual(input.yearTo);
  }
  if (outcome.operation === 'device-510k.catalog') {
    const items = (outcome.data as { items: (ClearanceRecord | ProductCodeEntry)[] }).items;
    const keys = items.map((i) => ('kNumber' in i ? i.kNumber : i.productCode));
    expect(keys).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(keys.length);
    for (const item of items) expect(item).toEqual('kNumber' in item ? records.get(item.kNumber) : codes.get(item.productCode));
  }
  if (outcome.operation === 'device-510k.top-product-codes') {
    expect((outcome.data as { codes: unknown[] }).codes).toEqual(snapshot.topProductCodes.codes.slice(0, input.limit as number));
  }
}

function expectSound(outcome: Outcome): void {
  if (outcome.ok) {
    const schema = ResponseSchemas[outcome.operation];
    const parsed = schema.shape.data.safeParse(outcome.data);
    expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 2))).toBe(true);
    return;
  }
  const { error, operation } = outcome;
  expect(CLIENT_ERRORS.has(error.code), `${error.code}: ${error.message}`).toBe(true);
  expect(error.message).toMatch(/^[^\n]+$/);
  for (const d of error.details) expect(typeof d.path === 'string' && typeof d.message === 'string').toBe(true);
  if (operation !== null) expect(isOperationName(operation)).toBe(true);
}

/** An answer over HTTP: the contract's status and headers, and a body its schemas accept. */
function expectSoundAnswer(status: number, contentType: string | undefined, text: string, requestBody: string): void {
  expect(status, text.slice(0, 300)).toBeLessThan(500);
  expect(contentType).toBe('application/json; charset=utf-8');
  const json: unknown = JSON.parse(text);
  if (status === 200) {
    const op = (json as { operation: OperationName }).operation;
    const parsed = ResponseSchemas[op].safeParse(json);
    expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 2))).toBe(true);
    return;
  }
  const parsed = ErrorBody.safeParse(json);
  expect(parsed.success, text.slice(0, 300)).toBe(true);
  const body = parsed.data as ErrorBody;
  expect(ERROR_STATUS[body.error.code]).toBe(status);
  expect(body.error.message).toMatch(/^[^\n]+$/);
  expect(body.error.message).not.toMatch(/\bat .+:\d+:\d+|node_modules|\/src\/|\/tmp\/|\.ts\b/);
  let known: string | null = null;
  try {
    known = knownOperationOf(JSON.parse(requestBody.replace(/^\ufeff/, '')));
  } catch {
    known = null;
  }
  if (body.error.code !== 'request_too_large' && body.error.code !== 'malformed_json') expect(body.operation).toBe(known);
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what.slice(0, 200)}`)), ms).unref())]);

// ---------------------------------------------------------------------------------------------------------------
// In process

describe('in process: the request pipeline and the operations', () => {
  it('any body: a valid answer or a contract error, never another exception', async () => {
    await fc.assert(
      fc.asyncProperty(bodyText, async (text) => {
        inProcessCases++;
        const outcome = await answerInProcess(Buffer.from(text, 'utf8'));
        count(outcome.ok ? 'ok' : outcome.error.code);
        expectSound(outcome);
      }),
      { seed: SEED, numRuns: 1200 },
    );
  });

  it.each(OPERATION_NAMES)('%s: any input, checked against the snapshot where the answer is known', async (operation) => {
    await fc.assert(
      fc.asyncProperty(inputFor(operation), async (input) => {
        inProcessCases++;
        const body = envelope(operation, input);
        const outcome = await answerInProcess(Buffer.from(JSON.stringify(body), 'utf8'));
        count(outcome.ok ? 'ok' : outcome.error.code);
        expectSound(outcome);
        expectMatchesTruth(JSON.parse(JSON.stringify(body)), outcome);
      }),
      { seed: SEED + OPERATION_NAMES.indexOf(operation), numRuns: 300 },
    );
  });

  it('every input schema refuses non-objects and unknown fields', () => {
    for (const name of OPERATION_NAMES) {
      for (const value of [null, [], 'x', 1, { unknownField: 1 }]) {
        inProcessCases++;
        expect(OPERATIONS[name].safeParse(value).success).toBe(false);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Over HTTP

const CONTENT_TYPES: (string | undefined)[] = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON;charset=UTF-8',
  'application/json; charset=latin1',
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json-patch+json',
  'multipart/form-data; boundary=x',
  '',
  'application/json\u0000',
];

async function send(text: string, contentType: string | undefined): Promise<void> {
  httpCases++;
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['content-type'] = contentType.replace(/\u0000/g, '');
  const res = await within(rawRequest(server.url, { method: 'POST', path: '/v1/query', headers, body: Buffer.from(text, 'utf8') }), 10_000, text);
  expectSoundAnswer(res.status, res.headers['content-type'], res.body.toString('utf8'), text);
  count(`HTTP ${res.status}`);
}

describe('over HTTP: the real server', () => {
  it('any body with any content type: the contract status and a schema-valid body, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(bodyText, fc.constantFrom(...CONTENT_TYPES), async (text, contentType) => send(text, contentType)),
      { seed: SEED, numRuns: 300 },
    );
  }, 60_000);

  it.each(OPERATION_NAMES)('%s: any input', async (operation) => {
    await fc.assert(
      fc.asyncProperty(inputFor(operation), async (input) => send(JSON.stringify(envelope(operation, input)), 'application/json')),
      { seed: SEED + 100 + OPERATION_NAMES.indexOf(operation), numRuns: 60 },
    );
  }, 60_000);

  it('bodies at and past the size limit, and deep nesting', async () => {
    const meta = JSON.stringify(envelope('device-510k.meta', {}));
    const pad = (n: number) => `${' '.repeat(n - meta.length)}${meta}`;
    const cases = [
      pad(MAX_BODY_BYTES),
      pad(MAX_BODY_BYTES + 1),
      JSON.stringify(envelope('device-510k.search', { query: 'x'.repeat(MAX_BODY_BYTES) })),
      '['.repeat(MAX_BODY_BYTES / 2) + ']'.repeat(MAX_BODY_BYTES / 2),
      `{"version":1,"operation":"device-510k.meta","input":${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}}`,
      `{"version":1,"operation":"device-510k.detail","input":{"id":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`,
      JSON.stringify({ version: 1, operation: 'device-510k.search', input: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f${i}`, i])) }),
    ];
    const statuses: number[] = [];
    for (const text of cases) {
      httpCases++;
      const res = await within(rawRequest(server.url, { method: 'POST', path: '/v1/query', headers: { 'content-type': 'application/json' }, body: text }), 10_000, text);
      expectSoundAnswer(res.status, res.headers['content-type'], res.body.toString('utf8'), text);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 413, 413, 400, 400, 400, 400]);
  }, 60_000);
});
