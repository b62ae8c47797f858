import { spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkStall, configFromEnv, DEFAULT_OPEN_FILES } from '../../src/server/config.ts';

describe('configFromEnv: OPEN_FILES', () => {
  it('keeps 16,384 descriptors open by default, the number given, or none for 0', () => {
    expect(configFromEnv({}).openFiles).toBe(DEFAULT_OPEN_FILES);
    expect(DEFAULT_OPEN_FILES).toBe(16_384);
    expect(configFromEnv({ OPEN_FILES: '256' }).openFiles).toBe(256);
    expect(configFromEnv({ OPEN_FILES: '0' }).openFiles).toBe(0);
    expect(configFromEnv({ OPEN_FILES: ' 0 ' }).openFiles).toBe(0);
  });

  it('refuses what is not a whole number, naming the variable', () => {
    for (const bad of ['many', '-1', '2.5']) expect(() => configFromEnv({ OPEN_FILES: bad })).toThrow(/OPEN_FILES/);
  });
});

describe('configFromEnv: EXPORT_CONCURRENCY and EXPORT_TABLE_CACHE_BYTES', () => {
  it('streams 4 exports at once by default, or the number given; keeps the export table cache unset (32 MiB) or the size given', () => {
    expect(configFromEnv({}).exportConcurrency).toBe(4);
    expect(configFromEnv({ EXPORT_CONCURRENCY: '9' }).exportConcurrency).toBe(9);
    expect(configFromEnv({}).exportTableBytes).toBeUndefined();
    expect(configFromEnv({ EXPORT_TABLE_CACHE_BYTES: '8MiB' }).exportTableBytes).toBe(8 * 1024 * 1024);
  });

  it('refuses what is not a whole number from 1, or a size above 0, naming the variable', () => {
    for (const bad of ['many', '-1', '2.5', '0']) expect(() => configFromEnv({ EXPORT_CONCURRENCY: bad })).toThrow(/EXPORT_CONCURRENCY/);
    for (const bad of ['lots', '0', '-5MiB']) expect(() => configFromEnv({ EXPORT_TABLE_CACHE_BYTES: bad })).toThrow(/EXPORT_TABLE_CACHE_BYTES/);
  });
});

describe('checkStall', () => {
  /** A socket as the check sees it: bytes moved either way, and whether it was closed. */
  const socket = (read: number, written: number) => {
    const s = { bytesRead: read, bytesWritten: written, destroyed: false, destroy: () => (s.destroyed = true) };
    return s;
  };

  it('closes a connection on which no byte moved since the check before, and only that one', () => {
    const s = socket(100, 50);
    let last = checkStall(s as unknown as Socket, -1);
    expect(last).toBe(150);
    expect(s.destroyed).toBe(false);
    s.bytesWritten += 1;
    last = checkStall(s as unknown as Socket, last);
    expect(last).toBe(151);
    expect(s.destroyed).toBe(false);
    checkStall(s as unknown as Socket, last);
    expect(s.destroyed).toBe(true);
  });

  it('never closes on the first check, even of a socket that moved nothing', () => {
    const s = socket(0, 0);
    checkStall(s as unknown as Socket, -1);
    expect(s.destroyed).toBe(false);
  });
});

describe('npm start with a setting it cannot read', () => {
  it('stops with exit code 2 and one line naming the variable, no stack trace', () => {
    const root = new URL('../..', import.meta.url).pathname;
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, OPEN_FILES: 'x', PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    const output = `${run.stdout}${run.stderr}`;
    expect(output).toContain('OPEN_FILES');
    expect(output).not.toMatch(/^\s+at /m);
    expect(JSON.parse(output.trim()).level).toBe('error');
  });
});
