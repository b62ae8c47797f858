import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contract/index.ts';
import { buildFirstSnapshot, firstBuildCommand, needsFirstBuild } from '../../src/server/bootstrap.ts';
import type { Logger } from '../../src/server/log.ts';
import { MainProcess } from '../helpers/main-process.ts';
import { until } from '../helpers/until.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

let running: MainProcess | null = null;
const dirs: string[] = [];
afterEach(async () => {
  if (running && running.child.exitCode === null) {
    // Its own process group: the build's helpers (Pagefind, when built with --pagefind) stop with it.
    try {
      process.kill(-(running.child.pid as number), 'SIGKILL');
    } catch {
      running.child.kill('SIGKILL');
    }
    await running.exited;
  }
  running = null;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('the first start', () => {
  it('listens at once and answers 503 source_unavailable, healthz too, while it builds the first snapshot', async () => {
    const cwd = await testTempDir('device-510k-first-');
    dirs.push(cwd);
    running = new MainProcess({}, { cwd, detached: true });
    // The log is JSON lines; the build's progress lines between them are not.
    const url = await until(() => running?.lines.map((l) => /"msg":"listening","url":"([^"]+)"/.exec(l)?.[1]).find((u) => u !== undefined), 'the listening line', 60_000);
    const built = () => running?.lines.some((l) => l.includes('snapshot built'));
    // The build starts once the build's modules are loaded, after the server listens.
    await until(() => running?.lines.some((l) => l.includes('no snapshot yet: building one')), 'the build to start', 60_000);

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
  }, 90_000);

  it('a SNAPSHOT_PATH that does not exist is an error naming it, and nothing is built', async () => {
    const cwd = await testTempDir('device-510k-first-');
    dirs.push(cwd);
    const missing = join(cwd, 'mistyped', 'snapshot');
    running = new MainProcess({ SNAPSHOT_PATH: missing }, { cwd });
    expect(await running.exited).toBe(1);
    expect(running.lines.join('\n')).toContain(`SNAPSHOT_PATH ${missing} does not exist`);
    expect(await readdir(cwd)).toEqual([]);
  }, 60_000);

  it('builds only at the default path, whichever way it is spelled', async () => {
    const cwd = await testTempDir('device-510k-first-');
    dirs.push(cwd);
    expect(await needsFirstBuild('snapshot', cwd)).toBe(true);
    expect(await needsFirstBuild(join(cwd, 'snapshot'), cwd)).toBe(true);
    await expect(needsFirstBuild(join(cwd, 'elsewhere'), cwd)).rejects.toThrow(`SNAPSHOT_PATH ${join(cwd, 'elsewhere')} does not exist`);
    expect(await needsFirstBuild(cwd, cwd)).toBe(false);
  });

  it('runs the build as a command of its own: the repository\'s build/cli.ts, publishing at the path', () => {
    const how = firstBuildCommand('snapshot');
    if ('unavailable' in how) throw new Error(how.unavailable);
    expect(how.args.some((a) => a.endsWith(join('build', 'cli.ts')))).toBe(true);
    expect(how.args.slice(-2)).toEqual(['--out', 'snapshot']);
  });

  it('a build that fails, or cannot be run, is logged and leaves the server as it was', async () => {
    const cwd = await testTempDir('device-510k-first-');
    dirs.push(cwd);
    const errors: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger: Logger = { request: () => {}, info: () => {}, error: (message, fields) => void errors.push({ message, fields }) };
    expect(await buildFirstSnapshot(join(cwd, 'snapshot'), logger, { command: process.execPath, args: ['-e', 'process.exit(3)'], cwd })).toBe(false);
    expect(errors.pop()).toMatchObject({ message: 'the build failed; serving 503 until a snapshot is published', fields: { reason: 'exit code 3' } });
    expect(await buildFirstSnapshot(join(cwd, 'snapshot'), logger, { command: join(cwd, 'no-such-command'), args: [], cwd })).toBe(false);
    expect(errors.pop()).toMatchObject({ message: 'the build failed; serving 503 until a snapshot is published', fields: { reason: expect.stringContaining('ENOENT') } });
    expect(await buildFirstSnapshot(join(cwd, 'snapshot'), logger, { unavailable: 'build/cli.ts is not there' })).toBe(false);
    expect(errors.pop()?.message).toBe('no snapshot, and the build is not available to make one; serving 503 until one is published');
    expect(await readdir(cwd)).toEqual([]);
  });
});
