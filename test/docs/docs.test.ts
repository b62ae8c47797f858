import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_NAMES, ResponseSchemas, type OperationName } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { post, startServer, type Running } from '../server/helpers.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The documents a reader of the repository is pointed at. */
const DOCUMENTS = ['README.md', 'SECURITY.md', 'test/fixtures/README.md', 'data/fda/SOURCES.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].filter(
  (f) => existsSync(join(ROOT, f)),
);

/** Folders the tools write when they run, cited as where output goes. */
const GENERATED = new Set(['bench/out/']);

/** SOURCES.md names files inside the upstream repositories the data came from: only its links point into ours. */
const LINKS_ONLY = new Set(['data/fda/SOURCES.md']);

/** Top folders of the repository: a code span that starts with one of them and has no placeholder is a file citation. */
const TOP = ['src', 'build', 'bench', 'test', 'docs', 'data', 'public', '.ci'];

/**
 * What a document cites: relative Markdown links (resolved beside the document), and code spans that spell a path
 * in the repository (resolved from its root), such as `src/search/tokenize.ts`. Placeholders (`K…`, `<name>`, `*`)
 * and paths inside a snapshot are not citations of the repository's files.
 */
export function citations(markdown: string): { links: string[]; paths: string[] } {
  const withoutFences = markdown.replace(/^```[\s\S]*?^```/gm, '');
  const links = [...withoutFences.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((href) => !/^[a-z]+:/i.test(href) && !href.startsWith('#'))
    .map((href) => href.split('#')[0] as string);
  const paths = [...withoutFences.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1] as string)
    .filter((span) => TOP.some((top) => span.startsWith(`${top}/`)))
    .filter((span) => !/[<>*…{}$|,]|\.\.\.|NNNN/.test(span))
    .map((span) => span.replace(/[:.]$/, ''));
  return { links, paths };
}

describe('README and docs cite only files that exist', () => {
  it('finds the documents it checks', () => {
    expect(DOCUMENTS).toContain('README.md');
    expect(DOCUMENTS).toContain('docs/contract.md');
  });

  it('reads links and paths out of Markdown', () => {
    const found = citations('See [the contract](docs/contract.md#2-errors), `src/main.ts`, `records/K1234.json`, [site](https://x.org), `build/<stage>/`.\n```sh\ncat src/nope.ts\n```\n');
    expect(found).toEqual({ links: ['docs/contract.md'], paths: ['src/main.ts'] });
  });

  it.each(DOCUMENTS)('%s', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const { links, paths: spans } = citations(text);
    const paths = LINKS_ONLY.has(doc) ? [] : spans.filter((p) => !GENERATED.has(p));
    const missing = [
      ...links.filter((l) => l !== '' && !existsSync(resolve(ROOT, dirname(doc), l))).map((l) => `link ${l}`),
      ...paths.filter((p) => !existsSync(join(ROOT, p)) && !existsSync(resolve(ROOT, dirname(doc), p))).map((p) => `path ${p}`),
    ];
    expect(missing, `${doc} cites what is not in the repository`).toEqual([]);
  });

  it('no file of the repository cites a contract document outside it', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name.startsWith('.git') || entry.name === 'snapshot' || entry.name === 'snapshot-builds') continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.(ts|js|md|json|html)$/.test(entry.name) && !path.includes(`${join('data', 'fda')}`)) {
          if (/CONTRACT\.md/.test(readFileSync(path, 'utf8'))) offenders.push(relative(ROOT, path));
        }
      }
    };
    walk(ROOT);
    // This file names it in the pattern above, and nowhere else should.
    expect(offenders.filter((f) => f !== relative(ROOT, fileURLToPath(import.meta.url)))).toEqual([]);
  });
});

describe('every operation has a runnable example in docs/contract.md', () => {
  let server: Running;
  const examples = [...readFileSync(join(ROOT, 'docs/contract.md'), 'utf8').matchAll(/-d '(\{.*\})'/g)].map((m) => m[1] as string);

  beforeAll(async () => {
    server = await startServer({ snapshotPath: await buildFixtureSnapshot() });
  });
  afterAll(() => server?.close());

  it('has one example per operation', () => {
    const named = examples.map((e) => (JSON.parse(e) as { operation: string }).operation);
    expect([...named].sort()).toEqual([...OPERATION_NAMES].sort());
  });

  it.each(examples)('%s', async (body) => {
    const answer = await post(server.url, body);
    expect(answer.status).toBe(200);
    const operation = (JSON.parse(body) as { operation: OperationName }).operation;
    expect(ResponseSchemas[operation].safeParse(answer.json).success).toBe(true);
  });
});
