import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The two hosts' adapters of the one dispatcher (src/api/dispatch.ts). */
const ADAPTERS = ['src/server/routes.ts', 'src/worker/index.ts'];
const ADAPTER_MAX_LINES = 150;

/**
 * What an adapter may not hold: route or error code of its own. It names no route, matches none, makes no error and
 * writes no HTTP status; the route table and the dispatcher do that once for both hosts.
 */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/\b(matchRoute|ROUTES|routeRequest)\b/, 'matches routes itself'],
  [/\b(ApiError|errorAnswer|errorBody|toApiError)\b/, 'makes an error answer itself'],
  [/['"]\/(v1|healthz|snapshot|device)\b/, 'names a route'],
  [/['"](not_found|method_not_allowed|internal_error|source_unavailable|request_too_large|overloaded)['"]/, 'names an error code'],
  [/\bstatus\s*[:=!<>]|\b[1-5]\d\d\b/, 'writes or reads an HTTP status'],
];

/** Why `text` (the file `file`) is not a thin adapter, one reason a line. */
export function adapterViolations(file: string, text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  if (lines.length > ADAPTER_MAX_LINES) out.push(`${file}: ${lines.length} lines (at most ${ADAPTER_MAX_LINES})`);
  lines.forEach((line, i) => {
    // Comments may say what the dispatcher does.
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '').replace(/\/\*.*?\*\//g, '');
    for (const [pattern, why] of FORBIDDEN) if (pattern.test(code)) out.push(`${file}:${i + 1} ${why}: ${line.trim()}`);
  });
  return out;
}

describe('one dispatcher, two thin adapters', () => {
  it('finds route and error code in an adapter that has its own (so the check can fail)', () => {
    const text = [
      "import { matchRoute } from '../api/routes.ts';",
      "  if (match.kind === 'refuse') throw match.error;",
      "  if (path === '/healthz') return json(200, health);",
      "  throw new ApiError('not_found', 'Nothing is served at this path.');",
      '  if (asset.status !== 404) return asset;',
      ...Array.from({ length: 150 }, () => '// padding'),
    ].join('\n');
    expect(adapterViolations('x.ts', text)).toEqual([
      'x.ts: 155 lines (at most 150)',
      "x.ts:1 matches routes itself: import { matchRoute } from '../api/routes.ts';",
      "x.ts:3 names a route: if (path === '/healthz') return json(200, health);",
      "x.ts:3 writes or reads an HTTP status: if (path === '/healthz') return json(200, health);",
      "x.ts:4 makes an error answer itself: throw new ApiError('not_found', 'Nothing is served at this path.');",
      "x.ts:4 names an error code: throw new ApiError('not_found', 'Nothing is served at this path.');",
      'x.ts:5 writes or reads an HTTP status: if (asset.status !== 404) return asset;',
    ]);
  });

  it.each(ADAPTERS)('%s is under 150 lines and holds no route or error code of its own', (file) => {
    expect(adapterViolations(file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('both adapters run the one dispatcher', () => {
    for (const file of ADAPTERS) expect(readFileSync(join(ROOT, file), 'utf8')).toMatch(/\bcreateDispatcher\b/);
  });
});

/** A file of src/ longer than this does more than one job: split it (as the fast lane's parser, head writer, buffers and connection are). */
const SRC_MAX_LINES = 650;

/** The files of `files` (path → text) over SRC_MAX_LINES lines, with their length. */
export function tooLong(files: ReadonlyMap<string, string>): string[] {
  return [...files].flatMap(([file, text]) => {
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return lines > SRC_MAX_LINES ? [`${file}: ${lines} lines`] : [];
  });
}

describe('files of one job', () => {
  it('finds a file over 650 lines (so the check can fail)', () => {
    expect(tooLong(new Map([['a.ts', 'x\n'.repeat(651)], ['b.ts', 'x\n'.repeat(650)]]))).toEqual(['a.ts: 651 lines']);
  });

  it('no file in src/ is over 650 lines', () => {
    const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(50);
    expect(tooLong(new Map(files.map((f) => [`src/${f}`, readFileSync(join(ROOT, 'src', f), 'utf8')])))).toEqual([]);
  });
});
