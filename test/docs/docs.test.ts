import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderResultsSection, replaceResults } from '../../bench/lib/docs-results.ts';
import type { Results } from '../../bench/lib/results.ts';
import { OPERATION_NAMES, ResponseSchemas, type OperationName } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { post, startServer, type Running } from '../server/helpers.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The documents a reader of the repository is pointed at: every page at the top and in docs/, and the two beside the data. */
const PAGES = [...readdirSync(ROOT).filter((f) => f.endsWith('.md')), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const DOCUMENTS = [...PAGES, 'test/fixtures/README.md', 'data/fda/SOURCES.md'].filter((f) => existsSync(join(ROOT, f)));

/** Folders the tools write when they run, cited as where output goes. */
const GENERATED = new Set(['bench/out/']);

/** SOURCES.md names files inside the upstream repositories the data came from: only its links point into ours. */
const LINKS_ONLY = new Set(['data/fda/SOURCES.md']);

/** Top folders of the repository: a code span that starts with one of them and has no placeholder is a file citation. */
const TOP = ['src', 'build', 'bench', 'test', 'docs', 'data', 'public', '.ci'];

/** Markdown without its fenced code blocks, where nothing is a link, a heading or a citation. */
const withoutFences = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```/gm, '');

/**
 * What a document cites: relative Markdown links (resolved beside the document), the #anchors those links name (in
 * another page, or in the same one when `page` is empty), and code spans that spell a path in the repository
 * (resolved from its root), such as `src/search/tokenize.ts`. Placeholders (`K…`, `<name>`, `*`) and paths inside a
 * snapshot are not citations of the repository's files.
 */
export function citations(markdown: string): { links: string[]; paths: string[]; anchors: { page: string; anchor: string }[] } {
  const text = withoutFences(markdown);
  const hrefs = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((href) => !/^[a-z]+:/i.test(href));
  const links = hrefs.filter((href) => !href.startsWith('#')).map((href) => href.split('#')[0] as string);
  const anchors = hrefs.filter((href) => href.includes('#')).map((href) => ({ page: href.slice(0, href.indexOf('#')), anchor: href.slice(href.indexOf('#') + 1) }));
  const paths = [...text.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1] as string)
    .filter((span) => TOP.some((top) => span.startsWith(`${top}/`)))
    .filter((span) => !/[<>*…{}$|,]|\.\.\.|NNNN/.test(span))
    .map((span) => span.replace(/[:.]$/, ''));
  return { links, paths, anchors };
}

/**
 * The anchors a page offers, as GitHub makes them from its headings: the heading's text as rendered (code spans,
 * emphasis and links reduced to their text), lower-cased, punctuation dropped, spaces made hyphens, and a repeated
 * one numbered (`-1`, `-2`); plus any `<a id>` or `<a name>` written in the page.
 */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = (m[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1] as string);
  return out;
}

describe('README and docs cite only files that exist', () => {
  it('finds the documents it checks', () => {
    for (const page of ['README.md', 'CHANGELOG.md', 'SECURITY.md', 'docs/contract.md', 'docs/server.md', 'docs/search.md', 'docs/limits.md']) expect(DOCUMENTS).toContain(page);
  });

  it('reads links, anchors and paths out of Markdown', () => {
    const found = citations('See [the contract](docs/contract.md#2-errors), [below](#faq), `src/main.ts`, `records/K1234.json`, [site](https://x.org/#a), `build/<stage>/`.\n```sh\ncat src/nope.ts\n```\n');
    expect(found).toEqual({ links: ['docs/contract.md'], paths: ['src/main.ts'], anchors: [{ page: 'docs/contract.md', anchor: '2-errors' }, { page: '', anchor: 'faq' }] });
  });

  it("makes anchors from headings as GitHub does", () => {
    const page = '# Search (`device-510k.search`)\n## 2. Errors\n### Node\'s options\n## Publishing as static files (CDN or object store)\n## Notes\n## Notes\n```sh\n# not a heading\n```\n<a id="here"></a>\n';
    expect([...anchorsOf(page)]).toEqual(['search-device-510ksearch', '2-errors', 'nodes-options', 'publishing-as-static-files-cdn-or-object-store', 'notes', 'notes-1', 'here']);
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

  it.each(DOCUMENTS)('%s: every #anchor it links to is a heading of its page', (doc) => {
    const broken = citations(readFileSync(join(ROOT, doc), 'utf8'))
      .anchors.map(({ page, anchor }) => ({ file: page === '' ? join(ROOT, doc) : resolve(ROOT, dirname(doc), page), page, anchor }))
      .filter(({ file }) => file.endsWith('.md') && existsSync(file))
      .filter(({ file, anchor }) => !anchorsOf(readFileSync(file, 'utf8')).has(anchor))
      .map(({ page, anchor }) => `${page}#${anchor}`);
    expect(broken, `${doc} links to anchors its targets lack`).toEqual([]);
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

describe.each(['docs/contract.md', 'README.md'])('every operation has a runnable example in %s', (doc) => {
  let server: Running;
  const examples = [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/-d '(\{.*\})'/g)].map((m) => m[1] as string);

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

/** Every `.ts` file under `dir`, with its path from the repository's root. */
function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ path: `${dir}/${f}`, text: readFileSync(join(ROOT, dir, f), 'utf8') }));
}

/** The environment variables a file reads: `env.NAME`, `process.env.NAME`, or a reader given `env, 'NAME'`. */
function variablesRead(text: string): string[] {
  return [...text.matchAll(/\benv(?:\.|, ')([A-Z][A-Z0-9_]+)\b/g)].map((m) => m[1] as string).filter((name) => name !== 'PATH');
}

describe('every setting the code reads is documented where its host is described', () => {
  const read = (files: { path: string; text: string }[]) => [...new Set(files.flatMap((f) => variablesRead(f.text)))].sort();
  const named = (page: string, names: string[]) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    return names.filter((name) => !text.includes(`\`${name}\``));
  };
  const src = sources('src');
  const worker = src.filter((f) => f.path.startsWith('src/worker/'));
  const node = src.filter((f) => !f.path.startsWith('src/worker/'));

  it('finds the variables a file reads', () => {
    expect(variablesRead("const a = env.PORT; b(env, 'OPEN_FILES'); process.env.WORKERS; env.PATH; env.lower")).toEqual(['PORT', 'OPEN_FILES', 'WORKERS']);
  });

  it("the Node server's, in docs/server.md", () => {
    const names = read(node);
    expect(names).toContain('SNAPSHOT_PATH');
    expect(names).toContain('WORKERS');
    expect(named('docs/server.md', names)).toEqual([]);
  });

  it("the Worker's, in docs/deploy.md", () => {
    const names = read(worker);
    expect(names).toContain('MANIFEST_CHECK_SECONDS');
    expect(named('docs/deploy.md', names)).toEqual([]);
  });

  it("the commands', in some page", () => {
    const names = read([...sources('build'), ...sources('bench')]);
    expect(names).toContain('SYNC_BASE_URL');
    const all = PAGES.map((p) => readFileSync(join(ROOT, p), 'utf8')).join('\n');
    expect(names.filter((name) => !all.includes(`\`${name}\``))).toEqual([]);
  });

  it('every npm script, in some page', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const all = PAGES.map((p) => readFileSync(join(ROOT, p), 'utf8')).join('\n');
    expect(scripts.filter((name) => !all.includes(`npm run ${name}`) && !all.includes(`npm ${name}`))).toEqual([]);
  });
});

describe('run history lives in CHANGELOG.md and bench/results.json', () => {
  /** Prose with a full date in it, outside code and outside the section the bench writes. */
  const dated = (markdown: string): string[] => {
    const start = markdown.indexOf('<!-- results:');
    const end = markdown.indexOf('<!-- end of results -->');
    const prose = start >= 0 && end > start ? markdown.slice(0, start) + markdown.slice(end) : markdown;
    return withoutFences(prose)
      .replace(/`[^`]*`/g, '')
      .split('\n')
      .filter((line) => /\b(19|20)\d\d-\d\d-\d\d\b/.test(line));
  };

  it('finds a dated line', () => {
    expect(dated('Measured 2026-11-23 on two cores.\n`decided:2024-01-01..2024-03-31`\n')).toEqual(['Measured 2026-11-23 on two cores.']);
  });

  /** The changelog's lines under its headings that are not one change of under 300 characters on a line of its own. */
  const notOneLine = (markdown: string): string[] => {
    const body = markdown.slice(markdown.indexOf('\n## ') + 1);
    return body.split('\n').filter((line) => line !== '' && !/^#{2,3} /.test(line) && !(/^- \S/.test(line) && line.length < 300));
  };

  it('finds a change written on more than one line, or too long', () => {
    const text = `# Changelog\n\nIntro.\n\n## Unreleased\n\n- One line, 2 ms.\n- Two\n  lines.\n- ${'x'.repeat(300)}\n`;
    expect(notOneLine(text)).toEqual(['  lines.', `- ${'x'.repeat(300)}`]);
  });

  it('CHANGELOG.md has one line per change, each under 300 characters (the lab notes are in bench/results.json)', () => {
    expect(notOneLine(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'))).toEqual([]);
  });

  it.each(PAGES.filter((p) => p !== 'CHANGELOG.md'))('%s names no dated run', (page) => {
    expect(dated(readFileSync(join(ROOT, page), 'utf8'))).toEqual([]);
  });

  it("docs/performance.md shows bench/results.json as the bench writes it (npx tsx bench/report-docs.ts)", () => {
    const results = JSON.parse(readFileSync(join(ROOT, 'bench/results.json'), 'utf8')) as Results;
    const page = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
    expect(page).toContain(`${results.startedAt.slice(0, 10)}`);
    expect(replaceResults(page, renderResultsSection(results))).toBe(page);
  });
});
