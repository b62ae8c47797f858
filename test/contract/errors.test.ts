import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_NAMES, type OperationName } from '../../src/contract/index.ts';
import { SearchUnavailable } from '../../src/api/errors.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { VALID_INPUT, allProductCodes, ask, envelope, expectError, post, rawRequest, startServer } from '../server/helpers.ts';
import { TARGETS, startTarget, type Target } from './targets.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Every row of docs/contract.md section 2's error table, against each host of the API over the fixture snapshot:
 * the Node server and the Worker under workerd (test/contract/targets.ts). Cases that swap an operation's handler for
 * a stub, or read the server's log, need the Node server in-process and run on it only.
 */
for (const target of TARGETS) {
  // Stubbed handlers and the request log need the server in this process.
  const inProcess = target === 'node';

  describe(`on ${target}`, () => {
    let server: Target;
    let empty: Target;
    let snapshotPath: string;

    beforeAll(async () => {
      snapshotPath = await buildFixtureSnapshot();
      // And a host with no valid snapshot: a snapshot link that does not exist (yet), or an empty bucket.
      [server, empty] = await Promise.all([
        startTarget(target, { snapshotPath }),
        startTarget(target, { snapshotPath: null, missingPath: join(await testTempDir('device-510k-empty-'), 'snapshot') }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([server?.close(), empty?.close()]);
    });

    describe('malformed_json (400)', () => {
      it.each([
        ['an unfinished object', '{"version":1,'],
        ['plain text', 'hello'],
        ['an empty body', ''],
        ['a trailing comma', '{"version":1,"operation":"device-510k.meta","input":{},}'],
        ['single quotes', "{'version':1}"],
      ])('%s', async (_name, body) => {
        expectError(await post(server.url, body), 400, 'malformed_json', null);
      });

      it('bytes that are not UTF-8', async () => {
        const body = Buffer.concat([Buffer.from('{"version":1,"operation":"device-510k.meta","input":{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
        expectError(await post(server.url, body), 400, 'malformed_json', null);
      });
    });

    describe('invalid_request (400)', () => {
      it.each([
        ['an array', [], null],
        ['a number', 1, null],
        ['null', null, null],
        ['a string', '"device-510k.meta"', null],
        ['an empty object', {}, null],
        ['no input', { version: 1, operation: 'device-510k.meta' }, 'device-510k.meta'],
        ['input null', { version: 1, operation: 'device-510k.meta', input: null }, 'device-510k.meta'],
        ['input an array', { version: 1, operation: 'device-510k.meta', input: [] }, 'device-510k.meta'],
        ['input a string', { version: 1, operation: 'device-510k.detail', input: 'K123456' }, 'device-510k.detail'],
        ['no version', { operation: 'device-510k.meta', input: {} }, 'device-510k.meta'],
        ['version a string', { version: '1', operation: 'device-510k.meta', input: {} }, 'device-510k.meta'],
        ['version null', { version: null, operation: 'device-510k.meta', input: {} }, 'device-510k.meta'],
        ['no operation', { version: 1, input: {} }, null],
        ['operation a number', { version: 1, operation: 7, input: {} }, null],
        ['operation null', { version: 1, operation: null, input: {} }, null],
      ])('%s', async (_name, body, operation) => {
        const error = expectError(await post(server.url, body), 400, 'invalid_request', operation);
        if (typeof body === 'object' && body !== null && !Array.isArray(body)) expect(error.error.details.length).toBeGreaterThan(0);
      });
    });

    describe('unsupported_version (400)', () => {
      it.each([2, 0, -1, 1.5, 100])('version %s', async (version) => {
        const error = expectError(await post(server.url, { version, operation: 'device-510k.meta', input: {} }), 400, 'unsupported_version', 'device-510k.meta');
        expect(error.error.details).toEqual([{ path: 'version', message: 'must be 1' }]);
      });
    });

    describe('unknown_operation (400)', () => {
      it.each(['device-510k.nope', 'search', '', 'DEVICE-510K.META', 'device-510k.meta '])('%j', async (operation) => {
        expectError(await post(server.url, { version: 1, operation, input: {} }), 400, 'unknown_operation', null);
      });
    });

    describe('invalid_input (400)', () => {
      const search = VALID_INPUT['device-510k.search'];
      const cases: [OperationName, Record<string, unknown>, string, string][] = [
        ['device-510k.search', { ...search, pageSize: 51 }, 'input.pageSize', 'must be at most 50'],
        ['device-510k.search', { ...search, pageSize: 0 }, 'input.pageSize', 'must be at least 1'],
        ['device-510k.search', { ...search, page: 0 }, 'input.page', 'must be at least 1'],
        ['device-510k.search', { ...search, page: 1.5 }, 'input.page', 'must be an integer'],
        ['device-510k.search', { ...search, page: '1' }, 'input.page', 'must be an integer'],
        ['device-510k.search', { ...search, yearFrom: 1899 }, 'input.yearFrom', 'must be at least 1900'],
        ['device-510k.search', { ...search, yearTo: 10000 }, 'input.yearTo', 'must be at most 9999'],
        ['device-510k.search', { ...search, yearFrom: 2001, yearTo: 2000 }, 'input.yearTo', 'must not be before yearFrom'],
        ['device-510k.search', { ...search, applicant: '   ' }, 'input.applicant', 'must not be empty'],
        ['device-510k.search', { ...search, applicant: 'a'.repeat(257) }, 'input.applicant', 'must be at most 256 characters'],
        ['device-510k.search', { ...search, productCode: 'AB' }, 'input.productCode', 'must be three letters'],
        ['device-510k.search', { ...search, productCode: 'A1C' }, 'input.productCode', 'must be three letters'],
        ['device-510k.search', { ...search, query: 'x'.repeat(2049) }, 'input.query', 'must be at most 2048 characters'],
        ['device-510k.search', { ...search, query: null }, 'input.query', 'must be a string'],
        ['device-510k.search', (({ applicant: _a, ...rest }) => rest)(search), 'input.applicant', 'is required'],
        ['device-510k.search', { ...search, orderBy: 'relevance' }, 'input.orderBy', 'is not a field of device-510k.search'],
        ['device-510k.search', { ...search, sort: 'deviceName:asc' }, 'input.sort', expect.stringMatching(/^must be one of "relevance", "decisionDate:desc"/)],
        ['device-510k.search', { ...search, query: 'colour:red' }, 'input.query', expect.stringMatching(/^"colour:" is not a qualifier; the qualifiers are applicant:/)],
        ['device-510k.detail', { id: 'K12345' }, 'input.id', 'must be K followed by six digits'],
        ['device-510k.detail', { id: 'K1234567' }, 'input.id', 'must be K followed by six digits'],
        ['device-510k.detail', { id: 'DEN123456' }, 'input.id', 'must be K followed by six digits'],
        ['device-510k.detail', { id: 123456 }, 'input.id', 'must be a string'],
        ['device-510k.detail', {}, 'input.id', 'is required'],
        ['device-510k.detail', { id: 'K123456', kNumber: 'K123456' }, 'input.kNumber', 'is not a field of device-510k.detail'],
        ['device-510k.classification', { productCode: 'AB' }, 'input.productCode', 'must be three letters'],
        ['device-510k.classification', { productCode: 'ABCD' }, 'input.productCode', 'must be three letters'],
        ['device-510k.classification', { productCode: null }, 'input.productCode', 'must be a string'],
        ['device-510k.top-product-codes', { limit: 0 }, 'input.limit', 'must be at least 1'],
        ['device-510k.top-product-codes', { limit: 101 }, 'input.limit', 'must be at most 100'],
        ['device-510k.top-product-codes', { limit: '5' }, 'input.limit', 'must be an integer'],
        ['device-510k.top-product-codes', { limit: 5.5 }, 'input.limit', 'must be an integer'],
        ['device-510k.catalog', { kind: 'records', limit: 10, cursor: null }, 'input.kind', 'must be "clearance" or "product-code"'],
        ['device-510k.catalog', { kind: 'clearance', limit: 0, cursor: null }, 'input.limit', 'must be at least 1'],
        ['device-510k.catalog', { kind: 'clearance', limit: 501, cursor: null }, 'input.limit', 'must be at most 500'],
        ['device-510k.catalog', { kind: 'clearance', limit: 10, cursor: 5 }, 'input.cursor', 'must be a string or null'],
        ['device-510k.catalog', { kind: 'clearance', limit: 10 }, 'input.cursor', 'is required'],
        ['device-510k.meta', { verbose: true }, 'input.verbose', 'is not a field of device-510k.meta'],
      ];
      it.each(cases)('%s %j → %s %s', async (operation, input, path, message) => {
        const error = expectError(await ask(server.url, operation, input), 400, 'invalid_input', operation);
        expect(error.error.details).toContainEqual({ path, message });
        expect(error.error.message.startsWith(`${error.error.details[0]?.path} ${error.error.details[0]?.message}`)).toBe(true);
      });

      it('lists every broken rule, not only the first', async () => {
        const error = expectError(await ask(server.url, 'device-510k.search', { ...search, page: 0, pageSize: 99, extra: 1 }), 400, 'invalid_input', 'device-510k.search');
        expect(error.error.details.map((d) => d.path).sort()).toEqual(['input.extra', 'input.page', 'input.pageSize']);
      });

      it.skipIf(!inProcess)('counts the query in code points: 2,048 emoji are within the limit', async () => {
        // The limit is checked before search runs, so a stub search that answers 503 shows that the input passed.
        const s = await startServer({
          snapshotPath,
          operations: { 'device-510k.search': { input: (await import('../../src/contract/index.ts')).SearchInput, handler: async () => { throw new SearchUnavailable(); } } },
        });
        try {
          const ok = await ask(s.url, 'device-510k.search', { ...search, query: '😀'.repeat(2048) });
          expectError(ok, 503, 'source_unavailable', 'device-510k.search');
          const tooLong = await ask(s.url, 'device-510k.search', { ...search, query: '😀'.repeat(2049) });
          expectError(tooLong, 400, 'invalid_input', 'device-510k.search');
        } finally {
          await s.close();
        }
      });
    });

    describe('invalid_cursor (400)', () => {
      const catalog = (kind: string, cursor: string) => ask(server.url, 'device-510k.catalog', { kind, limit: 5, cursor });
      const firstCursor = async (kind: string) => {
        const res = await ask(server.url, 'device-510k.catalog', { kind, limit: 5, cursor: null });
        return (res.json as { page: { nextCursor: string } }).page.nextCursor;
      };

      it.each(['', 'abc', 'not a cursor!', '%%%%', 'A'.repeat(600)])('%j', async (cursor) => {
        expectError(await catalog('clearance', cursor), 400, 'invalid_cursor', 'device-510k.catalog');
      });

      it('an altered cursor', async () => {
        const cursor = await firstCursor('clearance');
        const bytes = Buffer.from(cursor, 'base64url');
        for (const at of [0, 5, bytes.length - 3]) {
          const altered = Buffer.from(bytes);
          altered[at] = (altered[at] ?? 0) ^ 0x01;
          expectError(await catalog('clearance', altered.toString('base64url')), 400, 'invalid_cursor', 'device-510k.catalog');
        }
        // The payload alone, re-encoded without its MAC, is refused too.
        const json = bytes.subarray(12).toString('utf8');
        expect(JSON.parse(json)).toMatchObject({ v: 1, k: 'clearance' });
        const forged = Buffer.from(json.replace(/"a":"K\d+"/, '"a":"K000001"')).toString('base64url');
        expectError(await catalog('clearance', forged), 400, 'invalid_cursor', 'device-510k.catalog');
      });

      it('a cursor of the other kind', async () => {
        expectError(await catalog('product-code', await firstCursor('clearance')), 400, 'invalid_cursor', 'device-510k.catalog');
        expectError(await catalog('clearance', await firstCursor('product-code')), 400, 'invalid_cursor', 'device-510k.catalog');
      });

      it('a cursor signed with another secret', async () => {
        const other = await startTarget(target, { snapshotPath, cursorSecret: 'another secret' });
        try {
          const res = await ask(other.url, 'device-510k.catalog', { kind: 'clearance', limit: 5, cursor: null });
          const cursor = (res.json as { page: { nextCursor: string } }).page.nextCursor;
          expectError(await catalog('clearance', cursor), 400, 'invalid_cursor', 'device-510k.catalog');
        } finally {
          await other.close();
        }
      });
    });

    describe('404', () => {
      it('record_not_found for a well-formed K number that is not in the snapshot', async () => {
        const error = expectError(await ask(server.url, 'device-510k.detail', { id: 'k999999' }), 404, 'record_not_found', 'device-510k.detail');
        expect(error.error.message).toContain('K999999');
      });

      it('product_code_not_found for a code neither classified nor on any clearance', async () => {
        const codes = new Set((await allProductCodes(snapshotPath)).map((e) => e.productCode));
        const absent = ['ZZZ', 'QQQ', 'XXY'].find((c) => !codes.has(c)) as string;
        const error = expectError(await ask(server.url, 'device-510k.classification', { productCode: absent.toLowerCase() }), 404, 'product_code_not_found', 'device-510k.classification');
        expect(error.error.message).toContain(absent);
      });

      it.each([
        ['GET', '/nope'],
        ['GET', '/v2/query'],
        ['POST', '/v1/query/extra'],
        ['POST', '/v1/queries'],
        ['GET', '/snapshot/'],
        ['GET', '/snapshot/no-such-file.json'],
        ['GET', '/snapshot/records/K999.json'],
        ['DELETE', '/healthz'],
      ])('not_found for %s %s', async (method, path) => {
        const res = await fetch(`${server.url}${path}`, { method });
        expectError({ status: res.status, headers: res.headers, text: '', json: await res.json() }, 404, 'not_found', null);
      });
    });

    describe('method_not_allowed (405)', () => {
      it.each(['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD'])('%s /v1/query', async (method) => {
        const res = await fetch(`${server.url}/v1/query`, { method });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST, OPTIONS');
        if (method !== 'HEAD') expectError({ status: res.status, headers: res.headers, text: '', json: await res.json() }, 405, 'method_not_allowed', null);
      });
    });

    describe('request_too_large (413)', () => {
      const padded = (bytes: number) => {
        const base = JSON.stringify(envelope('device-510k.meta', {}));
        return base.slice(0, -1) + ' '.repeat(bytes - base.length) + '}';
      };

      it('a body of exactly 64 KiB is read', async () => {
        const body = padded(64 * 1024);
        expect(Buffer.byteLength(body)).toBe(65536);
        expect((await post(server.url, body)).status).toBe(200);
      });

      it('a body one byte over 64 KiB is refused, by Content-Length', async () => {
        expectError(await post(server.url, padded(64 * 1024 + 1)), 413, 'request_too_large', null);
      });

      it('a chunked body is refused as it passes 64 KiB', async () => {
        const big = Buffer.from(padded(300 * 1024));
        const res = await rawRequest(server.url, {
          method: 'POST',
          path: '/v1/query',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          body: big,
        });
        expect(res.status).toBe(413);
        expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ error: { code: 'request_too_large' } });
      });

      it('the server keeps answering afterwards', async () => {
        expect((await ask(server.url, 'device-510k.meta', {})).status).toBe(200);
      });
    });

    describe('unsupported_media_type (415)', () => {
      const body = JSON.stringify(envelope('device-510k.meta', {}));
      it.each([
        ['text/plain', { 'content-type': 'text/plain' }],
        ['form data', { 'content-type': 'application/x-www-form-urlencoded' }],
        ['application/jsonp', { 'content-type': 'application/jsonp' }],
        ['no content type', {}],
      ])('%s', async (_name, headers) => {
        expectError(await post(server.url, body, headers as Record<string, string>), 415, 'unsupported_media_type', 'device-510k.meta');
      });

      it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'])('%s is accepted', async (type) => {
        expect((await post(server.url, body, { 'content-type': type })).status).toBe(200);
      });
    });

    describe('source_unavailable (503)', () => {
      it.each(OPERATION_NAMES.filter((n) => n !== 'device-510k.search'))('%s with no snapshot loaded', async (operation) => {
        const error = expectError(await ask(empty.url, operation, VALID_INPUT[operation]), 503, 'source_unavailable', operation);
        expect(error.sourceState).toMatchObject({ availability: 'unavailable', freshness: 'unknown', sourceRevision: null, snapshotGeneratedAt: null });
      });

      it('healthz says unavailable', async () => {
        const res = await fetch(`${empty.url}/healthz`);
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({ status: 'unavailable', sourceState: { availability: 'unavailable' } });
      });

      it('snapshot files with no snapshot loaded', async () => {
        const res = await fetch(`${empty.url}/snapshot/manifest.json`);
        expectError({ status: res.status, headers: res.headers, text: '', json: await res.json() }, 503, 'source_unavailable', null);
      });

      it.skipIf(!inProcess)('an operation that throws SearchUnavailable', async () => {
        const s = await startServer({
          snapshotPath,
          operations: { 'device-510k.meta': { input: (await import('../../src/contract/index.ts')).MetaInput, handler: async () => { throw new SearchUnavailable(); } } },
        });
        try {
          expectError(await ask(s.url, 'device-510k.meta', {}), 503, 'source_unavailable', 'device-510k.meta');
        } finally {
          await s.close();
        }
      });
    });

    describe('internal_error (500)', () => {
      it.skipIf(!inProcess)('a handler that throws: 500, the stack logged, never sent', async () => {
        const { MetaInput, DetailInput } = await import('../../src/contract/index.ts');
        const s = await startServer({
          snapshotPath,
          operations: {
            'device-510k.meta': { input: MetaInput, handler: async () => { throw new TypeError('boom at a secret place'); } },
            'device-510k.detail': { input: DetailInput, handler: () => { throw new Error('thrown before any await'); } },
          },
        });
        try {
          for (const [operation, input, secret] of [['device-510k.meta', {}, 'boom'], ['device-510k.detail', { id: 'K000001' }, 'thrown before']] as const) {
            const res = await ask(s.url, operation, input);
            const error = expectError(res, 500, 'internal_error', operation);
            expect(res.text).not.toContain(secret);
            expect(error.error.details).toEqual([]);
            const logged = s.logger.errors.find((e) => String(e.fields?.stack).includes(secret));
            expect(logged?.fields).toMatchObject({ operation });
          }
          // The server is still there.
          expect((await ask(s.url, 'device-510k.top-product-codes', { limit: 1 })).status).toBe(200);
        } finally {
          await s.close();
        }
      });
    });

    describe('internal_error (500) for a handler that never answers', () => {
      it.skipIf(!inProcess)('answers 500 at the operation deadline instead of holding the client', async () => {
        const { MetaInput } = await import('../../src/contract/index.ts');
        const s = await startServer({
          snapshotPath,
          operationTimeoutMs: 150,
          operations: { 'device-510k.meta': { input: MetaInput, handler: () => new Promise(() => {}) } },
        });
        try {
          expectError(await ask(s.url, 'device-510k.meta', {}), 500, 'internal_error', 'device-510k.meta');
          expect(s.logger.errors.some((e) => String(e.fields?.stack).includes('did not finish within 150 ms'))).toBe(true);
        } finally {
          await s.close();
        }
      });
    });

    describe('checks run in the order of the table', () => {
      const meta = JSON.stringify(envelope('device-510k.meta', {}));
      it.each([
        ['malformed JSON sent as text/plain', '{"version"', { 'content-type': 'text/plain' }, 400, 'malformed_json'],
        ['version 2 and an unknown operation', JSON.stringify(envelope('nope', {})).replace('"version":1', '"version":2'), undefined, 400, 'unsupported_version'],
        ['an unknown operation with a broken input', JSON.stringify(envelope('nope', { x: 1 })), undefined, 400, 'unknown_operation'],
        ['a broken input sent as text/plain', JSON.stringify(envelope('device-510k.meta', { x: 1 })), { 'content-type': 'text/plain' }, 400, 'invalid_input'],
        ['a valid request sent as text/plain', meta, { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ] as const)('%s', async (_name, body, headers, status, code) => {
        const res = await post(server.url, body, (headers ?? { 'content-type': 'application/json' }) as Record<string, string>);
        expect(res.status).toBe(status);
        expect((res.json as { error: { code: string } }).error.code).toBe(code);
      });

      it('input and cursor are checked before the snapshot is looked for', async () => {
        expectError(await ask(empty.url, 'device-510k.detail', { id: 'nope' }), 400, 'invalid_input', 'device-510k.detail');
        expectError(await ask(empty.url, 'device-510k.catalog', { kind: 'clearance', limit: 5, cursor: 'garbage' }), 400, 'invalid_cursor', 'device-510k.catalog');
        expectError(await post(empty.url, meta, { 'content-type': 'text/plain' }), 415, 'unsupported_media_type', 'device-510k.meta');
      });

      it('an oversized body is refused before anything in it is read', async () => {
        expectError(await post(server.url, 'x'.repeat(70_000), { 'content-type': 'text/plain' }), 413, 'request_too_large', null);
      });
    });
  });
}
