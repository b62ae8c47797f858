import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every command a user runs, by its script (npm run build, sync, mirror, generate, start, bench and the measuring scripts). */
const COMMANDS = [
  ['build/cli.ts', 'build'],
  ['build/sync.ts', 'sync'],
  ['build/mirror.ts', 'mirror'],
  ['build/generate.ts', 'generate'],
  ['build/worker/cli.ts', 'worker'],
  ['build/worker/assets-cli.ts', 'worker:assets'],
  ['build/page/bundle.ts', 'build:page'],
  ['build/client/bundle.ts', 'build:client'],
  ['src/main.ts', 'start'],
  ['src/mcp-stdio.ts', 'device-510k-mcp'],
  ['bench/run.ts', 'bench'],
  ['bench/server-load.ts', 'server-load'],
  ['bench/search-latency.ts', 'search-latency'],
  ['bench/profile.ts', 'profile'],
  ['bench/ab.ts', 'ab'],
  ['bench/pipelining-ab.ts', 'pipelining-ab'],
  ['bench/extensions-probe.ts', 'extensions-probe'],
  ['bench/export-throughput.ts', 'export-throughput'],
  ['bench/report-docs.ts', 'report-docs'],
  ['bench/index-memory.ts', 'index-memory'],
  ['bench/worker-probe.ts', 'worker-probe'],
  ['bench/hostile-download.ts', 'hostile-download'],
  ['bench/hostile-export.ts', 'hostile-export'],
  ['bench/hostile-http.ts', 'hostile-http'],
  ['bench/history-feeds.ts', 'history-feeds'],
  ['bench/hostile-search.ts', 'hostile-search'],
  ['bench/slice-probe.ts', 'slice-probe'],
  ['bench/openfda.ts', 'openfda'],
  ['bench/worker-cpu.ts', 'worker-cpu'],
  ['bench/mcp.ts', 'mcp-bench'],
  ['build/server-bundle.mjs', 'server-bundle'],
  ['build/instances/nginx.ts', 'nginx'],
  ['bench/page-load.ts', 'page-load'],
  ['bench/page-lineage.ts', 'page-lineage'],
  ['bench/page-agreement.ts', 'page-agreement'],
  ['build/search-chunks.ts', 'search-chunks'],
  ['bench/downloads.ts', 'downloads'],
  ['bench/lineage.ts', 'lineage'],
  ['bench/mirror-bytes.ts', 'mirror-bytes'],
  ['bench/openfda-slices.ts', 'openfda-slices'],
  ['bench/predicates.ts', 'predicates-bench'],
  ['bench/worker-start.ts', 'worker-start'],
  ['bench/chunked-warm.ts', 'chunked-warm'],
  ['bench/worker-warm-ab.ts', 'worker-warm-ab'],
  ['bench/worker-memory.ts', 'worker-memory'],
  ['bench/worker-profile.ts', 'worker-profile'],
  ['bench/predicate-search.ts', 'predicate-search'],
  ['build/predicates/cli.ts', 'predicates'],
  ['build/upload.ts', 'publish-snapshot'],
] as const;

/**
 * The scripts of bench/ and build/ that a person runs: every script at the top of bench/ (its lib/ holds the
 * children the scripts start), and every file of build/ that reads its own command line.
 */
function entryPoints(): string[] {
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
  const bench = readdirSync(join(ROOT, 'bench')).filter((n) => /\.(ts|mjs)$/.test(n) && !n.endsWith('.d.ts')).map((n) => `bench/${n}`);
  const build = files('build')
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .filter((f) => /process\.argv|parseArgs\(|parseCommandLine\(/.test(readFileSync(join(ROOT, f), 'utf8')))
    .map((f) => relative('.', f).split('\\').join('/'));
  return [...bench, ...build].sort();
}

it('the list covers every script in bench/ and build/', () => {
  const listed = new Set<string>(COMMANDS.map(([script]) => script));
  expect(entryPoints().filter((f) => !listed.has(f))).toEqual([]);
  expect(entryPoints()).toContain('bench/index-memory.ts');
});

type Ran = { code: number; stdout: string; stderr: string };

function runScript(script: string, args: string[]): Promise<Ran> {
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

// One process at a time: the machine has two cores, shared with the rest of the suite.
it('-h is --help (every command reads its arguments through the same helper)', async () => {
  const [long, short] = [await runScript('build/cli.ts', ['--help']), await runScript('build/cli.ts', ['-h'])];
  expect(long.code).toBe(0);
  expect(short).toEqual(long);
}, 90_000);

describe('every command: --help, and one line with exit 2 for an unknown option', () => {
  it.each(COMMANDS)('%s', async (script, name) => {
    const help = await runScript(script, ['--help']);
    const unknown = await runScript(script, ['--no-such-option']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: /);
    expect(help.stderr).toBe('');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(`${name}: Unknown option '--no-such-option' (see --help)\n`);
  }, 90_000);
});

it('every `npm run` script named in wrangler.toml, the README and docs/ exists in package.json', async () => {
  const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join('docs', f));
  const named = new Set<string>();
  for (const file of ['wrangler.toml', 'README.md', 'SECURITY.md', ...docs]) {
    for (const m of (await readFile(join(ROOT, file), 'utf8')).matchAll(/npm run ([\w:-]+)/g)) named.add(`${file}: ${m[1]}`);
  }
  expect([...named].some((n) => n.startsWith('wrangler.toml: '))).toBe(true);
  expect([...named].filter((n) => !Object.hasOwn(scripts, n.split(': ')[1] ?? ''))).toEqual([]);
});
