import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** The relative modules a file imports or re-exports, types included (`import type` too: a circle of types is still a circle to a reader). */
export function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => (m[1] ?? m[2]) as string);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
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

describe('the import graph of src and build', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('build')];
  const graph = new Map(files.map((f) => [f, importsOf(f, readFileSync(join(ROOT, f), 'utf8'))]));

  it('reads every relative import, and each names a file that exists', () => {
    expect(graph.get('src/main.ts')).toContain('src/server/app.ts');
    const broken = [...graph].flatMap(([f, deps]) => deps.filter((d) => !existsSync(join(ROOT, d))).map((d) => `${f} → ${d}`));
    expect(broken).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('has no circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('keeps src/operations and src/search free of node: imports (they run in a Worker too)', () => {
    const offenders = files
      .filter((f) => f.startsWith('src/operations/') || f.startsWith('src/search/'))
      .filter((f) => /^\s*import\b[^'"]*['"]node:/m.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('src never imports build at run time (the server runs where only a snapshot is shipped)', () => {
    const edges = [...graph].flatMap(([f, deps]) => (f.startsWith('src/') ? deps.filter((d) => d.startsWith('build/')).map((d) => `${f} → ${d}`) : []));
    expect(edges).toEqual([]);
  });
});
