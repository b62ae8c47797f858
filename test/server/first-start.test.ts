import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contract/index.ts';
import { needsFirstBuild } from '../../src/server/bootstrap.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

type Started = { child: ChildProcess; lines: string[]; exited: Promise<number | null> };

/** `npm start` in `cwd` with the given environment; its log lines (stdout and stderr) are collected as they come. */
function start(cwd: string, env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', TSX, MAIN], { cwd, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  }
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, lines, exited };
}

async function waitFor<T>(what: string, probe: () => T | undefined, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let running: Started | null = null;
const dirs: string[] = [];
afterEach(async () => {
  if (running && running.child.exitCode === null) {
    // Its own process group: the build's helpers (Pagefind) stop with it.
    process.kill(-(running.child.pid as number), 'SIGKILL');
    await running.exited;
  }
  running = null;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('the first start', () => {
  it('listens at once and answers 503 source_unavailable, healthz too, while it builds the first snapshot', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'device-510k-first-'));
    dirs.push(cwd);
    running = start(cwd, {});
    const listening = await waitFor('the listening line', () => running?.lines.map((l) => JSON.parse(l) as { msg?: string; message?: string; url?: string }).find((l) => l.url !== undefined));
    const url = listening.url as string;
    const built = () => running?.lines.some((l) => l.includes('snapshot built'));

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as { status: string }).status).toBe('unavailable');

    const answer = await fetch(`${url}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} }),
    });
    expect(answer.status).toBe(503);
    const body = ErrorBody.parse(await answer.json());
    expect(body.error.code).toBe('source_unavailable');
    expect(body.sourceState.availability).toBe('unavailable');
    // Both answers came while the build was still running (it takes far longer than two requests).
    expect(built()).toBe(false);
    expect(running.lines.some((l) => l.includes('no snapshot yet: building one'))).toBe(true);
  }, 90_000);

  it('a SNAPSHOT_PATH that does not exist is an error naming it, and nothing is built', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'device-510k-first-'));
    dirs.push(cwd);
    const missing = join(cwd, 'mistyped', 'snapshot');
    running = start(cwd, { SNAPSHOT_PATH: missing });
    expect(await running.exited).toBe(1);
    expect(running.lines.join('\n')).toContain(`SNAPSHOT_PATH ${missing} does not exist`);
    expect(await readdir(cwd)).toEqual([]);
  }, 60_000);

  it('builds only at the default path, whichever way it is spelled', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'device-510k-first-'));
    dirs.push(cwd);
    expect(await needsFirstBuild('snapshot', cwd)).toBe(true);
    expect(await needsFirstBuild(join(cwd, 'snapshot'), cwd)).toBe(true);
    await expect(needsFirstBuild(join(cwd, 'elsewhere'), cwd)).rejects.toThrow(`SNAPSHOT_PATH ${join(cwd, 'elsewhere')} does not exist`);
    expect(await needsFirstBuild(cwd, cwd)).toBe(false);
  });
});
