import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * One engine under both query languages: the set algebra (src/search/docset.ts), the page of an order
 * (src/search/page.ts) and the work budget (src/search/budget.ts) are written once, in src/search, and src/openfda
 * takes them from there. A concept's name declared a second time anywhere in src/, or bitmap arithmetic written in
 * src/openfda, is a second copy that one change would have to make twice.
 */
const SHARED: Record<string, readonly string[]> = {
  'src/search/docset.ts': ['Bits', 'DocSet', 'DocRange', 'ListOrRange', 'popcount', 'hasDoc', 'listHas', 'toBits', 'countOf', 'sliceOf', 'eachDoc', 'eachDocSliced', 'unionOf', 'unionInto', 'intersectionOf', 'complementOf', 'rangeSet', 'idsByBits', 'listOfBits'],
  'src/search/page.ts': ['pageOf', 'rankedPage', 'maskPage', 'selectNth', 'selectPage', 'SmallestKeys', 'Order', 'SortKey', 'PageAfter'],
  'src/search/budget.ts': ['Budget', 'Limits', 'WorkLimits', 'OPENFDA_LIMITS', 'QUERY_WORK', 'WORK_BUDGET', 'SLICE_STEPS'],
};

/** Names the shared modules once had elsewhere, which no file may declare again. */
const RETIRED: Record<string, string> = { LIMITS: 'src/search/budget.ts' };

/** Bitmap and budget arithmetic that belongs to the shared modules: a word's bits, a bitmap's words, a counted step. */
const OPENFDA_FORBIDDEN: readonly [RegExp, string][] = [
  [/Math\.clz32|0x55555555|>>>\s*5\b|&\s*31\b/, 'walks or sizes a bitmap itself'],
  [/\bspent\s*[+-]?=|\blimits\.work\b|\blimits\.slice\b/, 'counts work against the budget itself'],
];

const DECLARATION = /\b(?:class|function\*?|const|let|var|type|interface|enum)\s+([A-Za-z_$][\w$]*)/g;

/** The code of a file without comments and imports (an import names a shared concept, it does not declare it). */
const codeOf = (text: string): string =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/^\s*(?:import|export)\b[^;]*?\bfrom\s*'[^']*';/gm, '');

const declared = (code: string): Set<string> => new Set([...code.matchAll(DECLARATION)].map((m) => m[1]!));

/** Why `files` (path → text) hold a second copy of the engine's set, page or budget, one reason a line. */
export function engineViolations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  const owner = new Map<string, string>();
  for (const [home, names] of Object.entries(SHARED)) for (const name of names) owner.set(name, home);
  for (const [name, home] of Object.entries(RETIRED)) owner.set(name, home);
  for (const [file, text] of files) {
    const code = codeOf(text);
    for (const name of declared(code)) {
      const home = owner.get(name);
      if (home && home !== file) out.push(`${file}: declares ${name}, which ${home} holds`);
    }
    if (file.startsWith('src/openfda/')) {
      code.split('\n').forEach((line, i) => {
        for (const [pattern, why] of OPENFDA_FORBIDDEN) if (pattern.test(line)) out.push(`${file}:${i + 1} ${why}: ${line.trim()}`);
      });
    }
  }
  for (const [home, names] of Object.entries(SHARED)) {
    const text = files.get(home);
    if (text === undefined) {
      out.push(`${home}: missing`);
      continue;
    }
    const here = declared(codeOf(text));
    for (const name of names) if (!here.has(name)) out.push(`${home}: does not declare ${name}`);
  }
  return out;
}

/** Where the files of src/openfda take the shared modules from: `file → specifier` for each import of them. */
function sharedImports(files: ReadonlyMap<string, string>): Set<string> {
  const out = new Set<string>();
  for (const [file, text] of files) {
    if (!file.startsWith('src/openfda/')) continue;
    for (const m of text.matchAll(/from '(\.\.\/search\/(?:docset|page|budget)\.ts)'/g)) out.add(m[1]!);
  }
  return out;
}

function srcFiles(): Map<string, string> {
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  return new Map(files.map((f) => [`src/${f.split('\\').join('/')}`, readFileSync(join(ROOT, 'src', f), 'utf8')]));
}

describe('one set algebra, one page, one work budget for both engines', () => {
  it('finds a second copy of each (so the check can fail)', () => {
    const files = srcFiles();
    files.set('src/openfda/docset.ts', 'export class Bits {\n  has(d: number) { return (this.words[d >>> 5]! >>> (d & 31)) & 1; }\n}\nexport type DocSet = Uint32Array | Bits;');
    files.set('src/openfda/order.ts', 'export async function pageOf() {}');
    files.set('src/openfda/plan.ts', 'export const LIMITS = { work: 1 };\nexport class Budget {\n  charge(n: number) { this.spent += n; }\n}');
    files.set('src/search/sort.ts', 'function idsByBits() {}');
    expect(engineViolations(files).sort()).toEqual(
      [
        'src/openfda/docset.ts: declares Bits, which src/search/docset.ts holds',
        'src/openfda/docset.ts: declares DocSet, which src/search/docset.ts holds',
        'src/openfda/docset.ts:2 walks or sizes a bitmap itself: has(d: number) { return (this.words[d >>> 5]! >>> (d & 31)) & 1; }',
        'src/openfda/order.ts: declares pageOf, which src/search/page.ts holds',
        'src/openfda/plan.ts: declares LIMITS, which src/search/budget.ts holds',
        'src/openfda/plan.ts: declares Budget, which src/search/budget.ts holds',
        'src/openfda/plan.ts:3 counts work against the budget itself: charge(n: number) { this.spent += n; }',
        'src/search/sort.ts: declares idsByBits, which src/search/docset.ts holds',
      ].sort(),
    );
    files.delete('src/search/page.ts');
    expect(engineViolations(files)).toContain('src/search/page.ts: missing');
  });

  it('src/ declares each once, in src/search, and src/openfda does no bitmap or budget arithmetic of its own', () => {
    expect(engineViolations(srcFiles())).toEqual([]);
  });

  it('src/openfda takes all three from src/search', () => {
    expect([...sharedImports(srcFiles())].sort()).toEqual(['../search/budget.ts', '../search/docset.ts', '../search/page.ts']);
  });
});
