import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, realpath, rm } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSources } from '../../build/sources/default.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { startServer, type Running } from '../server/helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The pages a user reads: the README and every page of docs/. */
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/**
 * The mark that keeps a shell example from being run, on the line just before its fence, with the reason:
 * `<!-- example: not run: needs rclone and a bucket -->`. Every other shell example is run.
 */
const NOT_RUN = /^<!-- example: not run: (\S.*\S) -->$/;

export type Example = { page: string; line: number; script: string; notRun: string | null; answer: string | null };

/**
 * The shell examples of a page: fenced blocks marked sh, bash or shell, whether they are marked not to be run, and
 * the JSON answer shown right after one (a ```json block that follows it with nothing but blank lines between).
 */
export function shellExamples(page: string, markdown: string): Example[] {
  const lines = markdown.split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const mark = before >= 0 ? NOT_RUN.exec(lines[before]!.trim()) : null;
    let next = end + 1;
    while (next < lines.length && lines[next]!.trim() === '') next++;
    let answer: string | null = null;
    if (lines[next] === '```json') {
      let close = next + 1;
      while (close < lines.length && !/^```\s*$/.test(lines[close]!)) close++;
      answer = lines.slice(next + 1, close).join('\n');
    }
    out.push({ page, line: start + 1, script: lines.slice(start + 1, end).join('\n'), notRun: mark ? mark[1]! : null, answer });
    i = end;
  }
  return out;
}

/**
 * The curl commands a page shows in running text (a code span such as `curl 'https://YOUR-HOST/v1/changes?since=…'`)
 * that ask a server: run like the shell examples, with no answer shown.
 */
export function inlineExamples(page: string, markdown: string): Example[] {
  const out: Example[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const m of line.matchAll(/`(curl [^`]+)`/g)) {
      if (/localhost:8080|https:\/\/YOUR-HOST/.test(m[1]!)) out.push({ page, line: i + 1, script: m[1]!, notRun: null, answer: null });
    }
  });
  return out;
}

/**
 * What a shown answer claims: each member it shows with a plain value (`"total":1174`, `"kNumber":"K162054"`), as
 * JSON text; values cut short with `…` claim nothing. Members left out (an answer is shown cut short) are not claimed.
 */
export function shownMembers(answer: string): string[] {
  return [...answer.matchAll(/"[A-Za-z]+":(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)].map((m) => m[0]).filter((m) => !m.includes('…'));
}

/**
 * The commands a page shows that run one of the repository's scripts (`npx tsx <file>`, `node … <file>.ts`,
 * `npm run <script>`), in shell examples and in code spans.
 */
export function commandsShown(markdown: string): string[] {
  const fenced = [...markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].flatMap((m) => m[1]!.split('\n'));
  const spans = [...markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' '));
  return [...fenced, ...spans]
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    // `npm run mirror` alone names the script; with `--` after it, it is a command with its options.
    .filter((l) => /^(npx tsx |node [^`]*\.ts\b|npm run \S+ -- )/.test(l));
}

/** The script's usage line ("Usage: npx tsx bench/page-load.ts --snapshot DIR [options]"), found in bench/ and build/. */
async function usageLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const dir of ['bench', 'build']) {
    for (const file of await readdir(join(ROOT, dir), { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      const text = await readFile(join(ROOT, dir, file), 'utf8');
      for (const m of text.matchAll(/Usage: ([^\n`]+)/g)) lines.push(m[1]!.trim());
    }
  }
  return lines;
}

/** The options a usage line requires: those outside any [brackets]. */
export function requiredOptions(usage: string): string[] {
  let depth = 0;
  let plain = '';
  for (const ch of usage) {
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    else if (depth === 0) plain += ch;
  }
  return [...plain.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((m) => m[1]!);
}

/** The command a usage line is for: its words before the first option or placeholder. */
const commandOf = (line: string): string => line.split(/\s+(?=--|\[|[A-Z]{2,})/)[0]!.replace(/\s+--$/, '').trim();

describe('reading the examples out of Markdown', () => {
  it('finds shell blocks, the mark, and the answer shown after one', () => {
    const page = 'x\n<!-- example: not run: needs a bucket -->\n```sh\nrclone copy a b\n```\n\n```sh\ncurl -s localhost:8080/a\n```\n\n```json\n{"a":1,\n "b":…}\n```\n';
    expect(shellExamples('p.md', page)).toEqual([
      { page: 'p.md', line: 3, script: 'rclone copy a b', notRun: 'needs a bucket', answer: null },
      { page: 'p.md', line: 7, script: 'curl -s localhost:8080/a', notRun: null, answer: '{"a":1,\n "b":…}' },
    ]);
    expect(shownMembers('{"a":1,\n "b":…,"c":"x…","d":"K1","e":false}')).toEqual(['"a":1', '"d":"K1"', '"e":false']);
  });

  it('finds the curl commands of running text that ask a server, outside fences', () => {
    const page = 'Ask `curl \'https://YOUR-HOST/v1/changes?since=2026-11-01\'` or `curl --compressed`.\n```sh\n`curl localhost:8080/a`\n```\n';
    expect(inlineExamples('p.md', page)).toEqual([{ page: 'p.md', line: 1, script: "curl 'https://YOUR-HOST/v1/changes?since=2026-11-01'", notRun: null, answer: null }]);
  });

  it('finds the commands a page shows, and the options a usage line requires', () => {
    expect(commandsShown('Run `npx tsx bench/page-load.ts --modes\nstatic`, `npm run mirror` or `npm test`.\n```sh\nnpm run bench -- --quick   # short\n```\n')).toEqual([
      'npm run bench -- --quick',
      'npx tsx bench/page-load.ts --modes static',
    ]);
    expect(requiredOptions('npx tsx bench/ab.ts --a DIR --b DIR --snapshot DIR [options] [--runs N]')).toEqual(['--a', '--b', '--snapshot']);
    expect(commandOf('npm run mirror -- --from URL --to DIR [options]')).toBe('npm run mirror');
    expect(commandOf('npx tsx bench/page-load.ts --snapshot DIR [options]')).toBe('npx tsx bench/page-load.ts');
  });
});

describe('every command the pages show passes the options its usage requires', () => {
  it.each(PAGES)('%s', async (page) => {
    const usages = await usageLines();
    const missing: string[] = [];
    for (const command of commandsShown(readFileSync(join(ROOT, page), 'utf8'))) {
      // Matched by the script it runs: `npx tsx X.ts` and `node --import tsx X.ts` are the same command.
      const script = /\b((?:bench|build)\/\S+\.ts)\b/.exec(command)?.[1];
      const npm = /^npm run (\S+)/.exec(command)?.[1];
      const usage = usages.find((u) => (script ? u.includes(` ${script}`) : npm !== undefined && commandOf(u) === `npm run ${npm}`));
      if (!usage) continue;
      for (const option of requiredOptions(usage)) if (!command.split(/\s+/).includes(option)) missing.push(`${command}: lacks ${option} (${usage})`);
    }
    expect(missing).toEqual([]);
  });
});

describe('every shell example of the README and docs/ runs as typed against a server on the bundled data', () => {
  const examples = PAGES.flatMap((page) => {
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    return [...shellExamples(page, markdown), ...inlineExamples(page, markdown)];
  });
  let server: Running;
  let work: string;

  beforeAll(async () => {
    // Built now, as `npm start` on a fresh clone builds it: its history starts today.
    const epoch = Math.floor(Date.now() / 1000);
    const bundled = await defaultSources();
    // The bundled edges too, as `npm run build` reads them.
    const snapshot = await realpath((await buildFixture({ sources: [...bundled.sources, ...bundled.edges], epoch })).out);
    server = await startServer({ snapshotPath: snapshot });
    work = await testTempDir('device-510k-examples-');
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('finds the examples, and each either runs against the server or says why not', () => {
    expect(examples.length).toBeGreaterThan(20);
    const unrunnable = examples.filter((e) => e.notRun === null && !/localhost:8080|https:\/\/YOUR-HOST/.test(e.script));
    expect(unrunnable.map((e) => `${e.page}:${e.line} has no server to ask and no "<!-- example: not run: why -->"`)).toEqual([]);
  });

  // The rest fail the test above instead.
  const run = examples.filter((e) => e.notRun === null && /localhost:8080|https:\/\/YOUR-HOST/.test(e.script));
  it.each(run.map((e) => [`${e.page}:${e.line}`, e] as const))('%s', async (_where, example) => {
    const origin = server.url.replace(/\/$/, '');
    const host = origin.replace(/^http:\/\//, '');
    const script = example.script.replaceAll('https://YOUR-HOST', origin).replaceAll('localhost:8080', host);
    // As a user's shell runs it (each command's status counts, a pipeline's is its last command's), with curl told to
    // fail on an HTTP error status so that an error answer is a failed example, not a quiet one.
    const prelude = 'set -e\ncurl() { command curl --fail-with-body "$@"; }\n';
    const dir = await mkdtemp(join(work, 'run-'));
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile('bash', ['-c', prelude + script], { cwd: dir, maxBuffer: 64 << 20, timeout: 120_000 }, (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(code, `exit status; stderr: ${stderr.slice(0, 500)}`).toBe(0);
    expect(stdout.trim().length + (await readdir(dir)).length, 'the example shows or writes something').toBeGreaterThan(0);
    expect(stdout).not.toMatch(/"error":\{"code"/);
    if (/#\s*304\b/.test(example.script)) expect(stdout.split('\n')).toContain('304');
    if (example.answer !== null) {
      const shown = shownMembers(example.answer);
      expect(shown.length).toBeGreaterThan(0);
      expect(shown.filter((m) => !stdout.includes(m)), 'members the page shows that the answer lacks').toEqual([]);
    }
  });
});
