import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, OPERATION_NAMES, ShardIndex, type OperationName } from '../../src/contract/index.ts';
import { HealthBody } from '../../src/api/openapi.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { VALID_INPUT, ask, envelope, expectJsonHeaders, post } from '../server/helpers.ts';
import { TARGETS, hostFor } from './targets.ts';

/**
 * HTTP around the operations that is the contract's: CORS, health and the OpenAPI document, on each host of the API
 * (test/contract/targets.ts). Compression, files and logs are the Node host's (test/server/http.test.ts).
 */
let snapshotPath: string;
let manifest: Manifest;
let known: { kNumber: string; productCode: string };

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  manifest = Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8')));
  const index = ShardIndex.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.recordIndex), 'utf8')));
  known = { kNumber: index.shards[0]?.first as string, productCode: 'DXY' };
});
for (const target of TARGETS) {
  describe(`on ${target}`, () => {
    const api = hostFor(target, () => snapshotPath);

    describe('CORS', () => {
      it('OPTIONS /v1/query is a 204 preflight', async () => {
        const res = await fetch(`${api.url}/v1/query`, {
          method: 'OPTIONS',
          headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        });
        expect(res.status).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
        expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type');
        expect(await res.text()).toBe('');
      });

      it('answers, errors and files all allow any origin', async () => {
        expect((await ask(api.url, 'device-510k.meta', {})).headers.get('access-control-allow-origin')).toBe('*');
        expect((await ask(api.url, 'device-510k.detail', { id: 'K999999' })).headers.get('access-control-allow-origin')).toBe('*');
        // The Worker's snapshot files are its static assets, whose headers are the platform's.
        if (target === 'node') expect((await fetch(`${api.url}/snapshot/manifest.json`)).headers.get('access-control-allow-origin')).toBe('*');
        expect((await fetch(`${api.url}/healthz`)).headers.get('access-control-allow-origin')).toBe('*');
      });
    });

    describe('GET /healthz', () => {
      it('is ok with the sourceState while a snapshot is loaded', async () => {
        const res = await fetch(`${api.url}/healthz`);
        expect(res.status).toBe(200);
        expectJsonHeaders(res.headers);
        const body = HealthBody.parse(await res.json());
        expect(body.status).toBe('ok');
        expect(body.sourceState).toMatchObject({ availability: 'available', sourceRevision: manifest.sourceRevision });
      });
    });

    describe('GET /v1/openapi.json', () => {
      let doc: Record<string, any>;
      let ajv: Ajv2020;
      const validate = (component: string, value: unknown) => {
        const fn = ajv.getSchema(`openapi.json#/components/schemas/${component}`);
        if (!fn) throw new Error(`no component ${component}`);
        const ok = fn(value);
        return { ok, errors: JSON.stringify(fn.errors?.slice(0, 3)) };
      };
      const pascal = (n: OperationName) => n.replace('device-510k.', '').split('-').map((w) => w[0]?.toUpperCase() + w.slice(1)).join('');

      beforeAll(async () => {
        const res = await fetch(`${api.url}/v1/openapi.json`);
        expect(res.status).toBe(200);
        doc = (await res.json()) as Record<string, any>;
        ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
        ajv.addSchema(doc, 'openapi.json');
      });

      it('is OpenAPI 3.1 with the query endpoint and a component per request and response', () => {
        expect(doc.openapi).toBe('3.1.0');
        expect(doc.paths['/v1/query'].post.requestBody.content['application/json'].schema.oneOf).toHaveLength(OPERATION_NAMES.length);
        for (const name of OPERATION_NAMES) {
          expect(doc.components.schemas[`${pascal(name)}Request`]).toBeDefined();
          expect(doc.components.schemas[`${pascal(name)}Response`]).toBeDefined();
        }
      });

      it.each(OPERATION_NAMES.filter((n) => n !== 'device-510k.search'))('%s: real requests and answers match the document', async (operation) => {
        const input = operation === 'device-510k.detail' ? { id: known.kNumber } : VALID_INPUT[operation];
        const request = envelope(operation, input);
        expect(validate(`${pascal(operation)}Request`, request)).toMatchObject({ ok: true });
        const res = await post(api.url, request);
        expect(res.status).toBe(200);
        expect(validate(`${pascal(operation)}Response`, res.json)).toMatchObject({ ok: true });
        // The answer of one operation is not valid as another's.
        const other = operation === 'device-510k.meta' ? 'Detail' : 'Meta';
        expect(validate(`${other}Response`, res.json).ok).toBe(false);
      });

      it('error answers match ErrorBody, and requests the document refuses are refused by the server', async () => {
        const bad: [OperationName, Record<string, unknown>][] = [
          ['device-510k.search', { ...VALID_INPUT['device-510k.search'], pageSize: 51 }],
          ['device-510k.detail', { id: 'K12' }],
          ['device-510k.detail', { id: 'K123456', extra: true }],
          ['device-510k.classification', { productCode: 'ABCD' }],
          ['device-510k.top-product-codes', { limit: 101 }],
          ['device-510k.catalog', { kind: 'clearance', limit: 0, cursor: null }],
          ['device-510k.meta', { x: 1 }],
        ];
        for (const [operation, input] of bad) {
          const request = envelope(operation, input);
          expect(validate(`${pascal(operation)}Request`, request).ok).toBe(false);
          const res = await post(api.url, request);
          expect(res.status).toBe(400);
          expect(validate('ErrorBody', res.json)).toMatchObject({ ok: true });
        }
        const notFound = await ask(api.url, 'device-510k.detail', { id: 'K999999' });
        expect(validate('ErrorBody', notFound.json)).toMatchObject({ ok: true });
      });

      it('health answers match HealthBody', async () => {
        expect(validate('HealthBody', await (await fetch(`${api.url}/healthz`)).json())).toMatchObject({ ok: true });
      });
    });
  });
}
