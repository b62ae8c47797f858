import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

const STATIC = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
/** `import('x')` anywhere: a module loaded at run time, or a type taken from one (`typeof import('x')`). */
const DYNAMIC = /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
/** `import(` followed by anything but a quoted name: a module chosen at run time, which no reader of the source can check. */
const COMPUTED = /\bimport\s*\(\s*(?!['"])/g;

/** Every module a file's text names, static or dynamic, relative or a package, types included. */
export function specifiersOf(text: string): { specifier: string; dynamic: boolean }[] {
  return [
    ...[...text.matchAll(STATIC)].map((m) => ({ specifier: (m[1] ?? m[2]) as string, dynamic: false })),
    ...[...text.matchAll(DYNAMIC)].map((m) => ({ specifier: m[1] as string, dynamic: true })),
  ];
}

/**
 * The relative modules a file imports or re-exports, at load time or at run time (`import()`), types included (`import
 * type` too: a circle of types is still a circle to a reader).
 */
export function importsOf(file: string, text: string): string[] {
  return specifiersOf(text)
    .map((s) => s.specifier)
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

/** Every circle of the graph: strongly connected components of more than one module, or a module importing itself (Tarjan). */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * The layers: for each folder, the folders of ours it may import (besides its own files), the packages it may import
 * (`any`: not checked here), and whether it may use Node's modules (`node:`). Everything below HTTP is portable (it
 * runs in a Worker and in the browser page too); `node/` and `worker/` are the two adapters; the build may import the
 * source, never the other way round (the server runs where only a snapshot is shipped).
 */
type Layer = { imports: readonly string[]; packages: readonly string[] | 'any'; node: boolean };
const PORTABLE_CORE = ['src/contract', 'src/utils', 'src/snapshot', 'src/search', 'src/operations', 'src/openfda', 'src/feeds', 'src/api'];
export const LAYERS: Readonly<Record<string, Layer>> = {
  'src/contract': { imports: [], packages: ['zod'], node: false },
  // Helpers for every layer, and so of none: a file here that uses node: may serve only the Node side (checked below).
  'src/utils': { imports: [], packages: [], node: true },
  'src/snapshot': { imports: ['src/contract', 'src/utils'], packages: 'any', node: false },
  // A snapshot's index is opened over its files (snapshot-index.ts); the engine itself reads plain values.
  'src/search': { imports: ['src/contract', 'src/snapshot', 'src/utils'], packages: 'any', node: false },
  'src/operations': { imports: ['src/contract', 'src/search', 'src/snapshot', 'src/utils'], packages: 'any', node: false },
  // openFDA's endpoints run on the engine's index and sets, never through an operation of the contract.
  'src/openfda': { imports: ['src/contract', 'src/search', 'src/snapshot', 'src/utils'], packages: 'any', node: false },
  'src/feeds': { imports: ['src/contract', 'src/utils'], packages: 'any', node: false },
  'src/api': { imports: ['src/contract', 'src/feeds', 'src/openfda', 'src/operations', 'src/search', 'src/snapshot', 'src/utils'], packages: 'any', node: false },
  'src/client': { imports: ['src/contract'], packages: 'any', node: false },
  'src/cli': { imports: [], packages: 'any', node: true },
  'src/node': { imports: ['src/contract', 'src/snapshot', 'src/utils'], packages: 'any', node: true },
  'src/worker': { imports: ['src/api', 'src/contract', 'src/operations', 'src/snapshot', 'src/utils'], packages: 'any', node: false },
  'src/server': { imports: ['src/api', 'src/contract', 'src/node', 'src/operations', 'src/snapshot', 'src/utils'], packages: 'any', node: true },
  // src/mcp-stdio.ts, the MCP server on stdio, runs the API's operations over a snapshot it opens itself.
  src: { imports: ['src/cli', 'src/server', 'src/node', 'src/api', 'src/operations', 'src/utils'], packages: 'any', node: true },
  build: { imports: ['src/*'], packages: 'any', node: true },
};
/** Folders whose files, and every file they reach, never use node: (a Worker and a browser have none). */
const PORTABLE = [...PORTABLE_CORE.filter((f) => f !== 'src/utils'), 'src/client', 'src/worker'];

/** The layer a file belongs to: `src/<folder>`, `src` for the files at its top, `build` for all of build/. */
export function layerOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'build') return 'build';
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

/** The folder of a file for the circle check: `src/<folder>` or `build/<folder>`, or the top of either. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

const allowed = (from: Layer, to: string) => from.imports.some((f) => f === to || (f.endsWith('/*') && to.startsWith(f.slice(0, -1))));

/** Every import of `texts` (file → its text) that the layers forbid, as `file → what (why)`. */
export function layerViolations(texts: ReadonlyMap<string, string>, layers: Readonly<Record<string, Layer>> = LAYERS): string[] {
  const out: string[] = [];
  for (const [file, text] of texts) {
    const from = layerOf(file);
    const layer = layers[from];
    if (!layer) {
      out.push(`${file}: the folder ${from} has no entry in the table of layers`);
      continue;
    }
    if (file.startsWith('src/') && COMPUTED.test(text)) out.push(`${file} → import() of a computed name (name the module, so that its layer can be checked)`);
    COMPUTED.lastIndex = 0;
    for (const { specifier, dynamic } of specifiersOf(text)) {
      const how = dynamic ? 'import()' : 'import';
      if (specifier.startsWith('.')) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), specifier));
        const to = layerOf(target);
        if (to !== from && !allowed(layer, to)) out.push(`${file} → ${target} (${how}: ${from} may not import ${to})`);
      } else if (specifier.startsWith('node:')) {
        if (!layer.node) out.push(`${file} → ${specifier} (${how}: ${from} runs without Node)`);
      } else if (layer.packages !== 'any') {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);
        if (!layer.packages.includes(name)) out.push(`${file} → ${specifier} (${how}: ${from} may import only ${layer.packages.join(', ') || 'no package'})`);
      }
    }
  }
  return out.sort();
}

/** Files of the portable folders that reach, through any chain of imports, a file that uses node:. */
export function portableReachingNode(texts: ReadonlyMap<string, string>, portable: readonly string[] = PORTABLE): string[] {
  const graph = new Map([...texts].map(([f, t]) => [f, importsOf(f, t)]));
  const usesNode = (f: string) => specifiersOf(texts.get(f) ?? '').some((s) => s.specifier.startsWith('node:'));
  const out: string[] = [];
  for (const start of graph.keys()) {
    if (!portable.includes(layerOf(start))) continue;
    const seen = new Set<string>([start]);
    const path = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const f = queue.shift() as string;
      if (usesNode(f)) {
        const chain = [f];
        while (path.has(chain[0] as string)) chain.unshift(path.get(chain[0] as string) as string);
        out.push(chain.join(' → '));
        break;
      }
      for (const d of graph.get(f) ?? []) if (!seen.has(d)) (seen.add(d), path.set(d, f), queue.push(d));
    }
  }
  return out.sort();
}

/** The graph of folders (an edge for each import from one folder into another). */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [f, deps] of graph) {
    const from = folderOf(f);
    if (!out.has(from)) out.set(from, new Set());
    for (const d of deps) if (folderOf(d) !== from) out.get(from)!.add(folderOf(d));
  }
  for (const to of [...out.values()].flatMap((s) => [...s])) if (!out.has(to)) out.set(to, new Set());
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

describe('the checks can fail', () => {
  it('finds a circle when there is one', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('reads import() and types taken from one, as well as static imports and re-exports', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type {\n  B,\n} from '../b/b.ts';",
      "export * from './c.ts';",
      "import './d.ts';",
      "type P = Pick<typeof import('../../build/snapshot/build.ts'), 'runBuild'>;",
      "const m = await import('../server/app.ts');",
      "const z = await import ( 'zod' );",
    ].join('\n');
    expect(specifiersOf(text)).toEqual([
      { specifier: './a.ts', dynamic: false },
      { specifier: '../b/b.ts', dynamic: false },
      { specifier: './c.ts', dynamic: false },
      { specifier: './d.ts', dynamic: false },
      { specifier: '../../build/snapshot/build.ts', dynamic: true },
      { specifier: '../server/app.ts', dynamic: true },
      { specifier: 'zod', dynamic: true },
    ]);
  });

  it('refuses a dynamic import across a forbidden boundary, a node: module in a portable folder, and a computed import()', () => {
    const texts = new Map([
      ['src/server/bootstrap.ts', "const p = await import('../../build/snapshot/build.ts');"],
      ['src/contract/x.ts', "import { z } from 'zod';\nconst s = await import('../search/grammar.ts');\nimport { readFile } from 'node:fs/promises';\nimport pLimit from 'p-limit';"],
      ['src/worker/y.ts', "const f = await import('node:fs');\nimport { NodeStorage } from '../node/files.ts';"],
      ['src/api/z.ts', 'const m = await import(name);'],
      ['build/ok.ts', "import { x } from '../src/server/app.ts';\nconst y = await import('../src/node/files.ts');"],
    ]);
    expect(layerViolations(texts)).toEqual([
      'src/api/z.ts → import() of a computed name (name the module, so that its layer can be checked)',
      'src/contract/x.ts → node:fs/promises (import: src/contract runs without Node)',
      'src/contract/x.ts → p-limit (import: src/contract may import only zod)',
      'src/contract/x.ts → src/search/grammar.ts (import(): src/contract may not import src/search)',
      'src/server/bootstrap.ts → build/snapshot/build.ts (import(): src/server may not import build)',
      'src/worker/y.ts → node:fs (import(): src/worker runs without Node)',
      'src/worker/y.ts → src/node/files.ts (import: src/worker may not import src/node)',
    ]);
  });

  it('refuses an operation imported by src/openfda, a type too (its endpoints share the engine, not the operations)', () => {
    const texts = new Map([
      ['src/openfda/a.ts', "import { searchIndexOf } from '../operations/search.ts';"],
      ['src/openfda/b.ts', "import type { OperationContext } from '../operations/types.ts';"],
      ['src/openfda/c.ts', "import { searchIndexOf } from '../search/snapshot-index.ts';"],
    ]);
    expect(layerViolations(texts)).toEqual([
      'src/openfda/a.ts → src/operations/search.ts (import: src/openfda may not import src/operations)',
      'src/openfda/b.ts → src/operations/types.ts (import: src/openfda may not import src/operations)',
    ]);
  });

  it('finds a portable file that reaches node: through another folder', () => {
    const texts = new Map([
      ['src/api/a.ts', "import { h } from '../utils/hash.ts';"],
      ['src/utils/hash.ts', "import { createHash } from 'node:crypto';"],
      ['src/api/b.ts', "import { l } from '../utils/lru.ts';"],
      ['src/utils/lru.ts', 'export class L {}'],
    ]);
    expect(portableReachingNode(texts)).toEqual(['src/api/a.ts → src/utils/hash.ts']);
  });

  it('finds a circle of folders made by a dynamic import', () => {
    const texts = new Map([
      ['src/a/one.ts', "import { b } from '../b/two.ts';"],
      ['src/b/two.ts', "const a = await import('../a/three.ts');"],
      ['src/a/three.ts', 'export const a = 1;'],
    ]);
    const graph = new Map([...texts].map(([f, t]) => [f, importsOf(f, t)]));
    expect(circles(graph)).toEqual([]);
    expect(circles(folderGraph(graph))).toEqual([['src/a', 'src/b']]);
  });
});

describe('the import graph of src and build', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('build')];
  const texts = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
  const graph = new Map([...texts].map(([f, t]) => [f, importsOf(f, t)]));

  it('reads every relative import, and each names a file that exists', () => {
    expect(graph.get('src/main.ts')).toContain('src/server/app.ts');
    const broken = [...graph].flatMap(([f, deps]) => deps.filter((d) => !existsSync(join(ROOT, d))).map((d) => `${f} → ${d}`));
    expect(broken).toEqual([]);
  });

  it('has no circle of files', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no circle of folders', () => {
    expect(circles(folderGraph(graph))).toEqual([]);
  });

  it('keeps every import within the table of layers, dynamic ones included', () => {
    expect(layerViolations(texts)).toEqual([]);
  });

  it('keeps every file the portable folders reach free of node: (they run in a Worker and a browser too)', () => {
    expect(portableReachingNode(texts)).toEqual([]);
  });

  it('the Worker reads the snapshot through its barrel, which holds only portable code', () => {
    const around = [...graph].flatMap(([f, deps]) =>
      layerOf(f) === 'src/worker' ? deps.filter((d) => layerOf(d) === 'src/snapshot' && d !== 'src/snapshot/index.ts').map((d) => `${f} → ${d}`) : [],
    );
    expect(around).toEqual([]);
  });
});

/** madge's graph of `paths` (relative to `baseDir`), as file → the files it imports, dynamic imports included. */
async function madgeGraph(baseDir: string, paths: readonly string[]): Promise<{ graph: Map<string, string[]>; circular: string[][]; skipped: string[] }> {
  const result = await madge(
    paths.map((p) => join(baseDir, p)),
    { baseDir, fileExtensions: ['ts'], excludeRegExp: [/\.d\.ts$/] },
  );
  return { graph: new Map(Object.entries(result.obj())), circular: result.circular(), skipped: result.warnings().skipped };
}

describe('madge, a second reader of the same graph', () => {
  let fixture: string;
  beforeAll(async () => {
    fixture = await testTempDir('imports-madge-');
    for (const [file, text] of [
      ['a/one.ts', "import { two } from '../b/two.ts';\nexport const one = two + 1;\n"],
      ['b/two.ts', "export const two = 2;\nexport const later = () => import('../a/three.ts');\n"],
      ['a/three.ts', "import { one } from './one.ts';\nexport const three = one;\n"],
    ] as const) {
      mkdirSync(join(fixture, dirname(file)), { recursive: true });
      writeFileSync(join(fixture, file), text);
    }
  });
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('finds a circle closed by a dynamic import, at file and at folder level (so the checks below can fail)', async () => {
    const { graph, circular } = await madgeGraph(fixture, ['a', 'b']);
    expect(graph.get('b/two.ts')).toEqual(['a/three.ts']);
    expect(circular).toEqual([['a/one.ts', 'b/two.ts', 'a/three.ts']]);
    const folders = new Map([...graph].map(([f, deps]) => [`src/${f}`, deps.map((d) => `src/${d}`)]));
    expect(circles(folderGraph(folders))).toEqual([['src/a', 'src/b']]);
  });

  describe('over src and build', () => {
    let found: Awaited<ReturnType<typeof madgeGraph>>;
    beforeAll(async () => {
      found = await madgeGraph(ROOT, ['src', 'build']);
    });

    it('reads the same files as the test above, and resolves every import it finds', () => {
      expect(found.skipped).toEqual([]);
      const ours = [...sourceFiles('src'), ...sourceFiles('build')].sort();
      expect([...found.graph.keys()].sort()).toEqual(ours);
    });

    it('finds no circle of files', () => {
      expect(found.circular).toEqual([]);
    });

    it('finds no circle of folders', () => {
      expect(circles(folderGraph(found.graph))).toEqual([]);
    });
  });
});
