import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { HOST_COPY_SUFFIX, wantsHostCopy } from '../../build/write/compress.ts';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { mulberry32 } from '../helpers/random.ts';

/**
 * Shared by the reliability suite: fixed seeds, figures printed as the tests run, a byte-level snapshot check, raw
 * sockets for requests that fetch would refuse to send, and a garbage collector for memory figures.
 */

/** One seed for the whole suite, so a failure replays exactly; override with RELIABILITY_SEED to explore. */
export const SEED = Number(process.env.RELIABILITY_SEED ?? 510_510);

/** Prints a figure the way the suite's summary quotes it: `[reliability] name: value`. */
export function figure(name: string, value: string | number): void {
  console.log(`[reliability] ${name}: ${typeof value === 'number' ? value.toLocaleString('en-US') : value}`);
}

/** A small seeded generator (mulberry32) for choices outside fast-check: kill delays, request mixes. */
export function seeded(seed: number): { next: () => number; int: (below: number) => number; pick: <T>(xs: readonly T[]) => T } {
  const next = mulberry32(seed);
  const int = (below: number) => Math.floor(next() * below);
  return { next, int, pick: <T>(xs: readonly T[]) => xs[int(xs.length)] as T };
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function listFiles(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(root, abs)));
    else out.push(relative(root, abs).split('\\').join('/'));
  }
  return out;
}

/**
 * Every problem with a snapshot directory, read byte by byte: the manifest must parse with the contract's schema,
 * every file it lists must be there with its size and sha256, and no other file may be there. Empty when whole.
 */
export async function snapshotProblems(dir: string): Promise<{ manifest: Manifest | null; problems: string[] }> {
  let manifest: Manifest;
  try {
    manifest = Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
  } catch (err) {
    return { manifest: null, problems: [`manifest: ${(err as Error).message.slice(0, 200)}`] };
  }
  const problems: string[] = [];
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const f of manifest.files) {
    const bytes = await readFile(join(dir, f.path)).catch(() => null);
    if (!bytes) problems.push(`${f.path}: missing`);
    else if (bytes.length !== f.bytes || sha256(bytes) !== f.sha256) problems.push(`${f.path}: content differs from the manifest`);
  }
  for (const rel of await listFiles(dir)) {
    if (rel === LAYOUT.manifest || listed.has(rel)) continue;
    // A static host's copy of a record shard is unlisted by design: it must hold exactly the shard's bytes.
    const of = rel.endsWith(HOST_COPY_SUFFIX) ? rel.slice(0, -HOST_COPY_SUFFIX.length) : null;
    if (of !== null && listed.has(of) && wantsHostCopy(of)) {
      const copy = await readFile(join(dir, rel));
      const shard = await readFile(join(dir, of)).catch(() => null);
      if (!shard || !gunzipSync(copy).equals(shard)) problems.push(`${rel}: host copy differs from ${of}`);
      continue;
    }
    problems.push(`${rel}: not listed in the manifest`);
  }
  if (manifest.counts.files !== manifest.files.length + 1) problems.push('counts.files does not match the file list');
  return { manifest, problems };
}

export const isSymlink = async (path: string): Promise<boolean> => (await lstat(path).catch(() => null))?.isSymbolicLink() ?? false;

export type RawExchange = { text: string; status: number | null; closedByServer: boolean; error: string | null };

/**
 * Sends bytes on a raw socket (pieces written `gapMs` apart, so a client can be as slow as it likes) and collects
 * whatever comes back until the server closes the connection or `giveUpMs` passes.
 */
export function rawExchange(
  port: number,
  pieces: readonly (string | Buffer)[],
  options: { gapMs?: number; giveUpMs?: number; endAfter?: boolean } = {},
): Promise<RawExchange> {
  const { gapMs = 0, giveUpMs = 10_000, endAfter = false } = options;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let error: string | null = null;
    let timer: NodeJS.Timeout | null = null;
    let i = 0;
    const finish = () => {
      if (timer) clearTimeout(timer);
      clearTimeout(giveUp);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : null, closedByServer, error });
    };
    const giveUp = setTimeout(finish, giveUpMs);
    const writeNext = () => {
      if (socket.destroyed) return;
      if (i >= pieces.length) {
        if (endAfter) socket.end();
        return;
      }
      socket.write(pieces[i++] as string | Buffer);
      timer = setTimeout(writeNext, gapMs);
    };
    socket.on('connect', writeNext);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', (err) => {
      error = (err as NodeJS.ErrnoException).code ?? err.message;
      closedByServer = true;
      finish();
    });
  });
}

/** A string cut into one-byte pieces: the slowest client HTTP allows. */
export const byteByByte = (s: string): string[] => Array.from(Buffer.from(s, 'latin1'), (b) => String.fromCharCode(b));

export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** POSTs a body to /v1/query with a deadline: a hang fails the test instead of stalling it. */
export async function postWithin(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  ms = 10_000,
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : new Blob([new Uint8Array(body)]),
    signal: AbortSignal.timeout(ms),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export type ServerProcess = {
  url: string;
  port: number;
  /** The server's heap after a full collection, and its resident set, in bytes. */
  memory: () => Promise<{ heapUsed: number; rss: number }>;
  close: () => Promise<void>;
};

/** Starts the server in a child process (see server-process.ts) with these createApp options. */
export async function startServerProcess(options: Record<string, unknown>): Promise<ServerProcess> {
  const script = fileURLToPath(new URL('./server-process.ts', import.meta.url));
  const child = fork(script, [JSON.stringify(options)], { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`the server process exited with ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { port } = await next<{ port: number }>('listening');
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    memory: async () => {
      const reply = next<{ heapUsed: number; rss: number; gc: boolean }>('memory');
      child.send({ type: 'memory' });
      const m = await reply;
      if (!m.gc) throw new Error('the server process runs without --expose-gc');
      return { heapUsed: m.heapUsed, rss: m.rss };
    },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
