import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pageBesideApi, precompressedCopy } from '../../src/server/public-dir.ts';

const PUBLIC = resolve(dirname(fileURLToPath(import.meta.url)), '../../public');
const STATIC_IMPORT = /^\s*import\b[^'"]*?\bfrom\s+['"](\.\/[^'"]+)['"]|^\s*import\s+['"](\.\/[^'"]+)['"]/gm;

/** Every module the page's entry loads before it runs: its static imports, and theirs, read from the files. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    for (const m of readFileSync(resolve(PUBLIC, 'js', file), 'utf8').matchAll(STATIC_IMPORT)) {
      const dep = (m[1] ?? m[2])!.slice(2);
      if (!seen.has(dep)) {
        seen.add(dep);
        visit(dep);
      }
    }
  };
  visit(entry);
  return seen;
}

describe('index.html asks for the modules app.js needs at once', () => {
  const html = readFileSync(resolve(PUBLIC, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="js\/([^"]+)">/g)].map((m) => m[1]!);

  const hints = (page: string) => [...page.matchAll(/<link rel="(?:module)?preload" href="([^"]+)"[^>]*>/g)].map((m) => m[1]!);

  it('preloads exactly the static import graph of app.js, each once', () => {
    // A module missing here costs a phone a round trip per level of imports; one listed but no longer imported is
    // downloaded for nothing.
    expect(preloaded.length).toBe(new Set(preloaded).size);
    expect(new Set(preloaded.filter((f) => !html.includes(`href="js/${f}" data-static-host`)))).toEqual(staticGraph('app.js'));
  });

  it('preloads for a static host static-source.js and the modules it imports that app.js does not', () => {
    // static-source.js runs only once its own imports are in: one not preloaded arrives a round trip later, behind
    // whatever static mode asked for meanwhile (the lineage view's files among them).
    const forStatic = [...html.matchAll(/<link rel="modulepreload" href="js\/([^"]+)" data-static-host>/g)].map((m) => m[1]!);
    const app = staticGraph('app.js');
    expect(new Set(forStatic)).toEqual(new Set(['static-source.js', ...[...staticGraph('static-source.js')].filter((f) => !app.has(f))]));
    expect(forStatic).toContain('lineage-source.js');
  });

  /**
   * The one-line script that hints at what static mode reads first by the address, run over an address with a
   * stand-in document at http://host/app/: each hint as `rel href` (a fetch's preload with the mode app.js fetches in).
   */
  const firstHints = (hash: string, search = ''): string[] => {
    // Both scripts, in the page's order: the lineage's hints above the stylesheet, the index directory's below.
    const scripts = [...html.matchAll(/<script data-static-host>([^\n]*)<\/script>/g)].map((m) => m[1]!);
    expect(scripts, 'index.html has the scripts that hint by the address').toHaveLength(2);
    expect(html.indexOf(scripts[0]!)).toBeLessThan(html.indexOf('<link rel="stylesheet"'));
    const added: { rel: string; href: string; as?: string; crossOrigin?: string }[] = [];
    const document = { baseURI: 'http://host/app/', createElement: () => ({}), head: { append: (l: (typeof added)[number]) => added.push(l) } };
    const window: { lineageTables?: { path: string; response: Promise<unknown> } } = {};
    const fetched: string[] = [];
    const fetch = (href: string, init: { headers: Record<string, string> }) => (fetched.push(`fetch ${href} ${JSON.stringify(init)}`), Promise.resolve(href));
    for (const script of scripts) new Function('location', 'document', 'window', 'fetch', script)({ hash, search }, document, window, fetch);
    if (window.lineageTables) expect(window.lineageTables.path).toMatch(/^lineage\/closure\//);
    for (const l of added) {
      if (l.rel === 'preload') expect(l).toEqual({ rel: 'preload', href: l.href, as: 'fetch', crossOrigin: 'anonymous' });
      else expect(l).toEqual({ rel: 'modulepreload', href: l.href });
    }
    return [...added.map((l) => `${l.rel} ${l.href}`), ...fetched.map((f) => (window.lineageTables ? `${f} as ${window.lineageTables.path}` : f))];
  };
  const directoryHint = (hash: string) => firstHints(hash).filter((h) => h.includes('search/')).map((h) => h.split(' ')[1]);

  it('hints a static host at what static mode reads first; the page beside the API drops exactly those hints', async () => {
    const staticOnly = ['js/static-source.js', 'js/lineage-source.js', 'js/record-names.js', 'snapshot/meta.json'];
    expect(hints(html)).toEqual(expect.arrayContaining(staticOnly));
    expect(directoryHint('')).toEqual(['snapshot/search/chunks.json']);
    const beside = pageBesideApi(html);
    expect(hints(beside).sort()).toEqual(hints(html).filter((h) => !staticOnly.includes(h)).sort());
    expect(beside).not.toMatch(/data-static-host|pageBesideApi/);
    // Nothing else changes: every other line of the page is kept, in order. What goes is the note (the comment
    // naming pageBesideApi) and the lines marked data-static-host.
    const lines = html.split('\n');
    const noteStart = lines.findIndex((l) => l.includes('What static mode reads first'));
    const noteEnd = lines.findIndex((l, i) => i >= noteStart && l.includes('-->'));
    expect(lines.slice(noteStart, noteEnd + 1).join(' ')).toContain('pageBesideApi');
    expect(noteStart).toBeGreaterThanOrEqual(0);
    const expected = lines.filter((l, i) => (i >= noteStart && i <= noteEnd) || /data-static-host/.test(l));
    expect(lines.filter((l) => !beside.split('\n').includes(l))).toEqual(expected);
    expect(beside.split('\n')).toEqual(lines.filter((l) => !expected.includes(l)));
    expect(expected.filter((l) => /data-static-host/.test(l))).toHaveLength(staticOnly.length + 2);
    // static-source.js and the files it reads first are what static-source.js and app.js fetch by these names.
    const app = readFileSync(resolve(PUBLIC, 'js/app.js'), 'utf8');
    expect(app).toMatch(/import\('\.\/static-source\.js'\)/);
    expect(app).toMatch(/'search\/chunks\.json'/);
    expect(app).toMatch(/'meta\.json'/);
    // The server's copy of the page folder is the page beside the API.
    const copy = await precompressedCopy(PUBLIC);
    expect(readFileSync(resolve(copy!, 'index.html'), 'utf8')).toBe(beside);
  });

  it('preloads the search index directory on every address but a lineage one, and there the first reads of the view', async () => {
    const { parseHash } = (await import('../../public/js/state.js' as string)) as { parseHash: (hash: string) => { record: string | null; lineage: string | null } };
    const { CLOSURE_TABLES_BYTES } = (await import('../../public/js/lineage-source.js' as string)) as { CLOSURE_TABLES_BYTES: number };
    const hashes = ['', '#', '#q=catheter', '#q=x&page=2', '#record=K123456', '#record=DEN123456&q=stent', '#lineage=predicates', '#record=K12345&lineage=predicates',
      '#record=K123456&lineage=sideways', '#record=K123456&lineage=predicates', '#q=stent&record=k074333&lineage=descendants', '#record=%20DEN123456%20&lineage=predicates'];
    for (const hash of hashes) {
      // The address app.js reads as a lineage's (parseHash), and no other, gets the lineage view's hints.
      const state = parseHash(hash);
      if (!(state.record && state.lineage)) {
        expect(firstHints(hash), hash).toEqual(['preload snapshot/search/chunks.json']);
        continue;
      }
      // What app.js asks for first at such an address (staticSourceFor), by the same names, and the view's modules.
      const dir = (q: string) => `http://host/app/${q}`;
      // The tables of the start's closure file in a range, handed to app.js by the path it reads them by.
      const closure = `lineage/closure/${state.lineage}/${state.record.slice(0, -3)}.bin`;
      const tables = (base: string) => `fetch ${base}${closure} {"headers":{"Range":"bytes=0-${CLOSURE_TABLES_BYTES - 1}"}} as ${closure}`;
      expect(firstHints(hash), hash).toEqual(['modulepreload js/lineage.js', 'modulepreload js/lineage-engine.js', `preload ${dir('snapshot/lineage/index.json')}`, tables(dir('snapshot/'))]);
      // A page given another snapshot (?snapshot=) asks for that one's files, as app.js does.
      expect(firstHints(hash, '?snapshot=https://cdn.example/s/').slice(2), hash).toEqual(['preload https://cdn.example/s/lineage/index.json', tables('https://cdn.example/s/')]);
    }
    expect(hashes.filter((h) => parseHash(h).lineage).length, 'lineage addresses among the cases').toBe(3);
    const app = readFileSync(resolve(PUBLIC, 'js/app.js'), 'utf8');
    expect(app).toContain("fetch(new URL('lineage/index.json', snapshotBase).href)");
    // The closure file's tables, read by app.js at once in a range as long as lineage-source.js reads them.
    expect(app).toContain('`lineage/closure/${current.lineage}/${current.record.slice(0, -3)}.bin`');
    expect(app).toContain(`{ headers: { Range: 'bytes=0-${CLOSURE_TABLES_BYTES - 1}' } }`);
    expect(app).toContain('window.lineageTables?.path === path ? window.lineageTables : null');
    expect(app).toContain("const snapshotBase = new URL(params.get('snapshot') ?? 'snapshot/', document.baseURI);");
  });

  it('asks for service.json in the mode app.js fetches it (same origin, credentials the same), so it is used', () => {
    expect(html).toMatch(/<link rel="preload" href="service\.json" as="fetch" crossorigin>/);
    expect(readFileSync(resolve(PUBLIC, 'js/app.js'), 'utf8')).toMatch(/fetch\(new URL\('service\.json', document\.baseURI\)\)/);
  });
});
