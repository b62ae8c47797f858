/**
 * The mirror and the sync against a hostile origin on 127.0.0.1 (bench/hostile-download.ts and the hostile section of
 * `npm run bench`): a gzip bomb served as the mirror's meta.json, and a pmn7680.zip with an extra entry of zeros for the
 * sync. Each run is a child process (`npm run mirror`, `npm run sync` as a user starts them) under /usr/bin/time -v:
 * its peak RSS, whether it failed with the expected message, and whether the published snapshot was left as it was.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { crc32, createDeflateRaw, createGzip, deflateRawSync } from 'node:zlib';
import { runMirror } from '../../build/mirror/run.ts';
import { runSync } from '../../build/sync/run.ts';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';

/** One hostile run of the mirror or the sync. */
export type DownloadRow = { name: string; peakRssBytes: number; seconds: number; exitCode: number; messageAsExpected: boolean; snapshotUntouched: boolean; output: string };

/** Whether the runs can be measured here (peak RSS comes from /usr/bin/time -v): null, or why not. */
export const downloadBombsProblem = (): string | null => (existsSync('/usr/bin/time') ? null : 'the download bombs need /usr/bin/time -v (Debian package time), which is not installed');

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MiB = 1024 * 1024;
const n = (v: number) => v.toLocaleString('en-US');
const ZERO = Buffer.alloc(MiB);

/** `total` zeros, in 1 MiB chunks, never all at once. */
function zeros(total: number): Readable {
  let left = total;
  return new Readable({
    read() {
      const size = Math.min(left, ZERO.length);
      left -= size;
      this.push(size > 0 ? ZERO.subarray(0, size) : null);
    },
  });
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The fields a zip entry's local header (from its byte 4) and its central directory header (from its byte 6) share,
 * in the same order: version needed (2.0), flags (none), method (deflate), time and date (zero), CRC-32, compressed
 * and declared sizes, the name's length (the extra field's stays zero).
 */
function writeEntryFields(header: Buffer, at: number, e: { declared: number; crc: number; deflated: Buffer }, nameLength: number): void {
  header.writeUInt16LE(20, at);
  header.writeUInt16LE(8, at + 4);
  header.writeUInt32LE(e.crc, at + 10);
  header.writeUInt32LE(e.deflated.length, at + 14);
  header.writeUInt32LE(e.declared, at + 18);
  header.writeUInt16LE(nameLength, at + 22);
}

/** A zip of stored entries' deflated data built by hand, so a 1.5 GiB entry never sits in memory. */
function zipOf(entries: { name: string; size: number; declared: number; crc: number; deflated: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'latin1');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeEntryFields(local, 4, e, name.length);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4); // made by: 2.0
    writeEntryFields(dir, 6, e, name.length);
    dir.writeUInt32LE(offset, 42);
    parts.push(local, name, e.deflated);
    central.push(dir, name);
    offset += 30 + name.length + e.deflated.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dirBytes, end]);
}

type Run = { code: number; peakKiB: number; stdout: string; stderr: string; seconds: number };

/** A script of the repository as a user runs it, under /usr/bin/time -v; stopped after ten minutes. */
function timed(script: string, args: string[]): Promise<Run> {
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn('/usr/bin/time', ['-v', process.execPath, '--import', 'tsx', script, ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const peak = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      done({ code: code ?? -1, peakKiB: Number(peak?.[1] ?? NaN), stdout, stderr: stderr.replace(/\n\tCommand being timed[\s\S]*$/, ''), seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** Where a link points and its manifest's bytes: what must not change when a run fails. */
async function published(link: string): Promise<string | null> {
  if (!existsSync(link)) return null;
  return `${await readlink(link)} ${createHash('sha256').update(await readFile(join(link, LAYOUT.manifest))).digest('hex')}`;
}

function row(name: string, run: Run, expected: RegExp, untouched: boolean): DownloadRow {
  const output = `${run.stdout}\n${run.stderr}`;
  return {
    name,
    peakRssBytes: run.peakKiB * 1024,
    seconds: run.seconds,
    exitCode: run.code,
    messageAsExpected: expected.test(output),
    snapshotUntouched: untouched,
    output: output.trim().split('\n').slice(-4).join(' | '),
  };
}


/**
 * Runs the mirror's cases against `snapshotDir` (only read) and the sync's cases, with bombs that inflate to
 * `bombBytes`; `onRow` sees each row as it is measured.
 */
export async function runDownloadBombs(options: { snapshotDir: string; bombBytes: number; only?: 'mirror' | 'sync'; log?: (line: string) => void; onRow?: (row: DownloadRow) => void }): Promise<DownloadRow[]> {
  const problem = downloadBombsProblem();
  if (problem) throw new Error(problem);
  const log = options.log ?? (() => {});
  const rows: DownloadRow[] = [];
  const push = (r: DownloadRow) => {
    rows.push(r);
    options.onRow?.(r);
  };
  const work = await mkdtemp(join(tmpdir(), 'hostile-download-'));
  const servers: Server[] = [];
  const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const ctx: Ctx = { work, listen, push, log, bombBytes: options.bombBytes };
  try {
    if (options.only !== 'sync') await mirrorSection(ctx, resolve(options.snapshotDir));
    if (options.only !== 'mirror') await syncSection(ctx);
  } finally {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await rm(work, { recursive: true, force: true });
  }
  return rows;
}

type Ctx = { work: string; listen: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Promise<string>; push: (r: DownloadRow) => void; log: (line: string) => void; bombBytes: number };

async function mirrorSection(ctx: Ctx, snapshotDir: string): Promise<void> {
  const { work, listen, push, log, bombBytes } = ctx;
  const manifestBytes = await readFile(join(snapshotDir, LAYOUT.manifest));
  const manifest = Manifest.parse(JSON.parse(manifestBytes.toString('utf8')));
  const bomb = await collect(zeros(bombBytes).pipe(createGzip({ level: 9 })));
  log(`\nmirror: ${snapshotDir} (${manifest.files.length} files); the bomb is ${n(bomb.length)} bytes of gzip`);
  // The hostile origin lists meta.json with another sha256 (so the mirror must fetch it) and, for `declaredBytes`, a
  // size of its choosing; its snapshot id changes with it.
  let hostile: { declaredBytes: number | null; contentLength: boolean } | null = null;
  const hostileManifest = (declaredBytes: number | null) => {
    const files = manifest.files.map((f) => (f.path === 'meta.json' ? { ...f, sha256: 'f'.repeat(64), bytes: declaredBytes ?? f.bytes } : f));
    return Buffer.from(JSON.stringify({ ...manifest, snapshotId: '0123456789abcdef', files }));
  };
  const base = await listen((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/snapshot\//, ''));
    if (hostile && path === LAYOUT.manifest) return void res.writeHead(200, { 'content-type': 'application/json' }).end(hostileManifest(hostile.declaredBytes));
    if (hostile && path === 'meta.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', ...(hostile.contentLength ? { 'content-length': bomb.length } : {}) });
      return void res.end(bomb);
    }
    readFile(join(snapshotDir, path)).then(
      (bytes) => res.writeHead(200, { 'content-length': bytes.length }).end(bytes),
      () => res.writeHead(404).end(),
    );
  });
  const to = join(work, 'mirror', 'snapshot');
  const first = await runMirror({ from: `${base}/snapshot`, to });
  log(`an honest copy first: ${first.counts.origin} files, ${n(first.writtenBytes)} bytes written`);

  const cases = [
    {
      name: 'mirror: gzip bomb as meta.json, with its length',
      hostile: { declaredBytes: null, contentLength: true },
      expected: /meta\.json \(the answer declares [\d,]+ bytes, past the limit of [\d,]+ bytes \(the manifest's [\d,]+ bytes\)\)/,
    },
    {
      name: 'mirror: gzip bomb as meta.json, no length, listed as 2 MiB',
      hostile: { declaredBytes: 2 * MiB, contentLength: false },
      expected: /meta\.json \(the body is more than 2,097,152 bytes once its gzip encoding is undone, past the limit \(the manifest's 2,097,152 bytes\); reading stopped there\)/,
    },
  ];
  for (const c of cases) {
    hostile = c.hostile;
    const before = await published(to);
    const run = await timed('build/mirror.ts', ['--from', `${base}/snapshot`, '--to', to, '--retries', '0', '--quiet']);
    push(row(c.name, run, c.expected, before !== null && (await published(to)) === before));
  }
  hostile = null;
}

async function syncSection(ctx: Ctx): Promise<void> {
  const { work, listen, push, log, bombBytes } = ctx;
  const text = await readFile(join(ROOT, 'test/fixtures/fda/pmn-1976-1990-sample.txt'));
  const textEntry = { name: 'pmn7680.txt', size: text.length, declared: text.length, crc: crc32(text), deflated: deflateRawSync(text) };
  let zerosCrc = 0;
  for (let left = bombBytes; left > 0; left -= MiB) zerosCrc = crc32(ZERO.subarray(0, Math.min(MiB, left)), zerosCrc);
  const deflatedZeros = await collect(zeros(bombBytes).pipe(createDeflateRaw({ level: 9 })));
  const honest = zipOf([textEntry]);
  let served = honest;
  const base = await listen((_req, res) => {
    const etag = `"${createHash('sha256').update(served).digest('hex').slice(0, 16)}"`;
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': served.length, etag }).end(served);
  });
  const url = `${base}/ftparea/`;
  log(`\nsync: pmn7680.zip of ${n(honest.length)} bytes; with the extra entry of zeros ${n(honest.length + deflatedZeros.length)} bytes`);

  const cases = [
    {
      name: 'sync: extra 1.5 GiB entry, its size in the directory',
      history: true,
      declared: bombBytes,
      expected: new RegExp(`pmn7680\\.zip: zeros\\.txt would inflate to ${n(bombBytes)} bytes, past the limit of [\\d,]+ bytes`),
    },
    {
      name: 'sync: extra entry, directory says 100 bytes',
      history: true,
      declared: 100,
      expected: /pmn7680\.zip: zeros\.txt inflates past the limit of [\d,]+ bytes \(default: 4 times .*\); inflating stopped there/,
    },
    {
      name: 'sync: same, first sync (no history: 1 GiB default)',
      history: false,
      declared: 100,
      expected: /pmn7680\.zip: zeros\.txt inflates past the limit of 1,073,741,824 bytes \(default with no size from a good sync yet; see --max-entry-bytes\); inflating stopped there/,
    },
  ];
  let i = 0;
  for (const c of cases) {
    const out = join(work, `sync-${i++}`, 'snapshot');
    if (c.history) {
      served = honest;
      const result = await runSync({ baseUrl: url, files: ['pmn7680.zip'], out });
      if (result.outcome !== 'built') throw new Error(`the honest sync did not build: ${result.detail}`);
    }
    served = zipOf([textEntry, { name: 'zeros.txt', size: bombBytes, declared: c.declared, crc: zerosCrc, deflated: deflatedZeros }]);
    const before = await published(out);
    const run = await timed('build/sync.ts', ['--base-url', url, '--file', 'pmn7680.zip', '--out', out, '--retries', '0', '--quiet']);
    const after = await published(out);
    push(row(c.name, run, c.expected, before === after && (c.history ? before !== null : after === null)));
  }
}
