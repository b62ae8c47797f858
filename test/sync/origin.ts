import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { zipSync } from 'fflate';

/** A stand-in for FDA's download server on 127.0.0.1: zips of real fixture rows, validators, and faults on demand. */

export type Fault =
  | { kind: 'status'; status: number; times?: number }
  | { kind: 'hang'; times?: number }
  | { kind: 'short-body'; times?: number }
  /** A body with no declared length that never ends (at most `maxBytes`), until the client hangs up. */
  | { kind: 'endless'; maxBytes: number }
  | { kind: 'ignore-validators' };

export type OriginFile = { bytes: Uint8Array; etag: string; lastModified: string; fault?: Fault };

export type Origin = {
  url: string;
  files: Map<string, OriginFile>;
  /** Other documents of the host by path (`/cdrh_docs/pdf20/K201129.pdf`): FDA's 510(k) and decision summaries. */
  documents: Map<string, Uint8Array>;
  /** Every request: path, its If-None-Match, the status sent (0 when it was left hanging). */
  requests: { path: string; ifNoneMatch: string | null; status: number; bytes: number }[];
  /** Replaces a file's bytes (a new upstream version, with new validators). */
  put(name: string, bytes: Uint8Array): void;
  fault(name: string, fault: Fault | undefined): void;
  close(): Promise<void>;
};

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/fda/${name}`, import.meta.url));

/** The fixture files as FDA ships them: each .txt alone in a zip of the same name. */
export const ORIGIN_FILES = [
  { zip: 'pmn7680.zip', fixture: 'pmn-1976-1990-sample.txt' },
  { zip: 'pmn96cur.zip', fixture: 'pmnlstmn-2020-sample.txt' },
  { zip: 'foiclass.zip', fixture: 'foiclass-sample.txt' },
] as const;
export const ORIGIN_FILE_NAMES = ORIGIN_FILES.map((f) => f.zip);

export async function fixtureText(name: string): Promise<string> {
  return (await readFile(fixture(name))).toString('latin1');
}

/** Zips one text file (latin1 string, so FDA's bytes are kept) under `<stem>.txt`. */
export function zipText(zipName: string, text: string): Uint8Array {
  const entry = zipName.replace(/\.zip$/i, '.txt');
  return zipSync({ [entry]: Buffer.from(text, 'latin1') }, { level: 6, mtime: new Date('2026-01-01T00:00:00Z') });
}

export async function startOrigin(): Promise<Origin> {
  const files = new Map<string, OriginFile>();
  const documents = new Map<string, Uint8Array>();
  let version = 0;
  const requests: Origin['requests'] = [];
  const put = (name: string, bytes: Uint8Array) => {
    version++;
    files.set(name, {
      bytes,
      etag: `"${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}"`,
      lastModified: new Date(Date.UTC(2026, 0, 1) + version * 86_400_000).toUTCString(),
      fault: files.get(name)?.fault,
    });
  };
  for (const f of ORIGIN_FILES) put(f.zip, zipText(f.zip, await fixtureText(f.fixture)));

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const ifNoneMatch = (req.headers['if-none-match'] as string | undefined) ?? null;
    const log = (status: number, bytes = 0) => requests.push({ path, ifNoneMatch, status, bytes });
    const document = documents.get(path);
    if (document) {
      log(200, document.byteLength);
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(document.byteLength) }).end(Buffer.from(document));
      return;
    }
    const file = path.startsWith('/ftparea/') ? files.get(path.slice('/ftparea/'.length)) : undefined;
    if (!file) {
      log(404);
      res.writeHead(404).end();
      return;
    }
    const active = file.fault;
    // A fault with `times` affects that many requests, then the file is served normally.
    if (active && 'times' in active && active.times !== undefined && --active.times <= 0) file.fault = undefined;
    if (active?.kind === 'status') {
      log(active.status);
      res.writeHead(active.status, { 'content-type': 'text/plain' }).end('failure');
      return;
    }
    if (active?.kind === 'hang') {
      log(0);
      return; // never answers; the client's timeout must end it
    }
    if (active?.kind === 'endless') {
      res.writeHead(200, { 'content-type': 'application/zip' });
      const chunk = Buffer.alloc(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < active.maxBytes && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => log(200, sent));
      pump();
      return;
    }
    if (active?.kind === 'short-body') {
      log(200, file.bytes.byteLength >> 1);
      res.writeHead(200, { 'content-length': String(file.bytes.byteLength) });
      res.write(file.bytes.subarray(0, file.bytes.byteLength >> 1));
      res.destroy();
      return;
    }
    if (active?.kind !== 'ignore-validators' && ifNoneMatch !== null && ifNoneMatch === file.etag) {
      log(304);
      res.writeHead(304, { etag: file.etag, 'last-modified': file.lastModified }).end();
      return;
    }
    log(200, file.bytes.byteLength);
    res
      .writeHead(200, {
        'content-type': 'application/zip',
        'content-length': String(file.bytes.byteLength),
        etag: file.etag,
        'last-modified': file.lastModified,
      })
      .end(Buffer.from(file.bytes));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ftparea/`,
    files,
    documents,
    requests,
    put,
    fault(name, fault) {
      const file = files.get(name);
      if (!file) throw new Error(`no origin file ${name}`);
      file.fault = fault;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
