import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi.ts';
import { OPERATION_NAMES } from '../../src/contract/operations.ts';

/**
 * The OpenAPI document as other tools read it: lint-clean under Redocly's recommended rules, and good enough for a
 * generated client (openapi-typescript + openapi-fetch) to narrow each answer to its operation's type by checking
 * `operation`, with no guard written by hand. Both tools run offline from node_modules.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let work: string;
let docPath: string;

beforeAll(async () => {
  // Under node_modules so that the generated type test resolves openapi-fetch as a user's project would.
  await mkdir(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  work = await mkdtemp(join(ROOT, 'node_modules', '.cache', 'openapi-check-'));
  docPath = join(work, 'openapi.json');
  await writeFile(docPath, JSON.stringify(buildOpenApiDocument(), null, 2));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the OpenAPI document', () => {
  it('names its server, asks for no credentials, and tells answers apart by operation', () => {
    const doc = buildOpenApiDocument() as Record<string, any>;
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(doc.security).toEqual([]);
    const answers = doc.paths['/v1/query'].post.responses['200'].content['application/json'].schema;
    expect(answers.discriminator.propertyName).toBe('operation');
    // The six operations of the specification and the lineage extension, each mapped once.
    expect(Object.keys(answers.discriminator.mapping).sort()).toEqual([...OPERATION_NAMES].sort());
    expect(OPERATION_NAMES).toContain('device-510k.lineage');
  });

  it('is clean under @redocly/cli lint with the recommended rules', async () => {
    const redocly = join(ROOT, 'node_modules', '.bin', 'redocly');
    const result = await new Promise<{ code: number; out: string }>((done) => {
      execFile(
        redocly,
        ['lint', docPath, '--extends', 'recommended', '--format', 'stylish'],
        { cwd: work, encoding: 'utf8', timeout: 120_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
        (err, stdout, stderr) => done({ code: err ? Number(err.code ?? 1) : 0, out: `${stdout}${stderr}` }),
      );
    });
    // Stylish lists each problem as `line:column  error|warning  rule  message`.
    expect(result.out.split('\n').filter((l) => /^\s*\d+:\d+\s+(error|warning)\s/.test(l))).toEqual([]);
    expect(result.out).toMatch(/Your API description is valid/);
    expect(result.code).toBe(0);
  }, 120_000);

  describe('through openapi-typescript and openapi-fetch', () => {
    let typesPath: string;
    beforeAll(async () => {
      typesPath = join(work, 'api.d.ts');
      await writeFile(typesPath, astToString(await openapiTS(new URL(`file://${docPath}`))));
    });

    /** Type errors of a small program written against the generated types, as tsc reports them. */
    const typeErrors = async (name: string, body: string): Promise<string[]> => {
      const file = join(work, `${name}.ts`);
      await writeFile(
        file,
        `import createClient from 'openapi-fetch';\nimport type { paths } from './api.d.ts';\n` +
          `const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080' });\n` +
          `export async function check(): Promise<void> {\n${body}\n}\n`,
      );
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        allowImportingTsExtensions: true,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        types: [],
        skipLibCheck: true,
      });
      return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    };

    it('narrows each answer by its operation', async () => {
      const errors = await typeErrors(
        'narrows',
        `  const { data } = await client.POST('/v1/query', { body: { version: 1, operation: 'device-510k.search', input: { query: 'stent', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 } } });
  if (!data) return;
  if (data.operation === 'device-510k.search') {
    const total: number = data.page.total;
    const field: string = data.facets[0]!.field;
    const k: string = data.data.items[0]!.kNumber;
    void [total, field, k];
  } else if (data.operation === 'device-510k.detail') {
    const name: string = data.data.record.deviceName;
    void name;
  } else if (data.operation === 'device-510k.top-product-codes') {
    const count: number = data.data.codes[0]!.count;
    void count;
  }`,
      );
      expect(errors).toEqual([]);
    }, 60_000);

    it('and refuses what an operation does not answer (so the check above can fail)', async () => {
      const errors = await typeErrors(
        'refuses',
        `  const { data } = await client.POST('/v1/query', { body: { version: 1, operation: 'device-510k.detail', input: { id: 'K802527' } } });
  if (data?.operation === 'device-510k.detail') {
    const total: number = data.page.total;
    void total;
  }`,
      );
      expect(errors.join('\n')).toMatch(/Property 'page' does not exist/);
    }, 60_000);
  });
});
