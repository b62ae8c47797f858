import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../bench/lib/counting-proxy.ts';
import { findGenerator, keptAutocannonPid, runLoad } from '../../bench/lib/load.ts';
import { killAll } from '../../bench/lib/procs.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The bench's load without wrk: autocannon's rounds run in one process kept for the run (its start is paid once),
 * each round's figures are its own, and the process does not keep a finished bench from exiting.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
let server: Awaited<ReturnType<typeof listen>>;
let tmp: string;
const paths: string[] = [];

beforeAll(async () => {
  server = await listen(createServer((req, res) => (paths.push(req.url ?? ''), res.end('ok'))));
  tmp = await testTempDir('load-');
});
afterAll(async () => {
  killAll();
  await server?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('runLoad with autocannon', () => {
  it('runs every round in the same process, each with its own requests and figures', async () => {
    const { generator } = await findGenerator('autocannon', ROOT);
    const url = `http://127.0.0.1:${server.port}`;
    const options = { connections: 4, seconds: 1, tmp };
    const first = await runLoad(generator, url, [{ method: 'GET', path: '/a' }], { ...options, tag: 'a' });
    const pid = keptAutocannonPid(generator.binary);
    expect(pid).not.toBeNull();
    const before = paths.length;
    const second = await runLoad(generator, url, [{ method: 'GET', path: '/b' }], { ...options, tag: 'b' });
    expect(keptAutocannonPid(generator.binary)).toBe(pid);
    expect(first.requests).toBeGreaterThan(0);
    expect(second.requests).toBeGreaterThan(0);
    expect(first.failures + second.failures).toBe(0);
    // The second round asked only for its own list, as many times as it counted (give or take the requests in
    // flight when its time ran out).
    expect(new Set(paths.slice(before))).toEqual(new Set(['/b']));
    expect(paths.slice(before).length).toBeGreaterThanOrEqual(second.requests);
  }, 120_000);

  it('a script that ran rounds exits when it is done, the kept process with it', async () => {
    const script = join(tmp, 'rounds.mts');
    await writeFile(
      script,
      `import { findGenerator, runLoad } from ${JSON.stringify(join(ROOT, 'bench/lib/load.ts'))};\n` +
        `const { generator } = await findGenerator('autocannon', ${JSON.stringify(ROOT)});\n` +
        `const r = await runLoad(generator, 'http://127.0.0.1:${server.port}', [{ method: 'GET', path: '/c' }], { connections: 2, seconds: 1, tmp: ${JSON.stringify(tmp)}, tag: 'c' });\n` +
        `console.log(JSON.stringify({ requests: r.requests }));\n`,
    );
    // A kept process that held the script open would run into this deadline.
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, timeout: 90_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!).requests).toBeGreaterThan(0);
  }, 120_000);
});
