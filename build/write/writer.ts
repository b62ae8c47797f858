import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import pLimit from 'p-limit';
import type { z } from 'zod';
import type { FileEntry } from '../../src/contract/index.ts';
import { compressTo, HOST_COPY_SUFFIX, SIBLING_MIN_BYTES, siblingsOf, wantsHostCopy, wantsSiblings } from './compress.ts';
import { jsonBytes, jsonLinesBytes, type LineSpan } from './json.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { safeRelPath } from '../../src/snapshot/paths.ts';

const DEDUPE_MAX_BYTES = 1024 * 1024;

/**
 * Writes files into a snapshot directory that is not yet published, with bounded concurrency, and remembers each
 * file's bytes and sha256 for the manifest. Only this class and the publisher touch the snapshot's files.
 */
export class SnapshotWriter {
  readonly root: string;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly entries = new Map<string, FileEntry>();
  private readonly pending: Promise<void>[] = [];
  private readonly madeDirs = new Set<string>();
  /** Compression runs on libuv's thread pool (4 threads by default): more at once would only queue there. */
  private readonly compressLimit = pLimit(4);
  /** Siblings by the sha256 of the bytes they compress: Pagefind writes the same scripts into every index. */
  private readonly siblingsBySha = new Map<string, Promise<{ suffix: string; bytes: Buffer }[]>>();

  constructor(root: string, concurrency = 16) {
    this.root = root;
    this.limit = pLimit(concurrency);
  }

  /** Validates `value` with `schema` (the build parses what it writes), then queues the write. */
  writeJson<S extends z.ZodType>(path: string, schema: S, value: z.input<S>): void {
    check(path, schema, value);
    this.writeBytes(path, jsonBytes(value));
  }

  /**
   * Validates an array with `schema`, then queues it as a file of one entry per line; returns its bytes and where
   * each entry sits in them (for the record table).
   */
  writeJsonLines<S extends z.ZodType>(path: string, schema: S, items: z.input<S> & readonly unknown[]): { bytes: Buffer; spans: LineSpan[] } {
    check(path, schema, items);
    const out = jsonLinesBytes(items);
    this.writeBytes(path, out.bytes);
    return out;
  }

  writeBytes(path: string, bytes: Uint8Array): void {
    const rel = normalizeRel(path);
    if (this.entries.has(rel)) throw new Error(`file written twice: ${rel}`);
    const entry = { path: rel, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
    this.entries.set(rel, entry);
    const task = this.limit(async () => {
      const abs = join(this.root, rel);
      await this.ensureDir(dirname(abs));
      await writeFile(abs, bytes);
    });
    this.pending.push(task);
    this.writeSiblings(entry, bytes);
    if (wantsHostCopy(rel)) this.writeHostCopy(rel, bytes);
  }

  /** Queues a shard's host copy (see compress.ts): written beside it, never listed. */
  private writeHostCopy(rel: string, bytes: Uint8Array): void {
    const task = this.compressLimit(async () => {
      const packed = await compressTo('gzip', bytes);
      const abs = join(this.root, `${rel}${HOST_COPY_SUFFIX}`);
      await this.ensureDir(dirname(abs));
      await writeFile(abs, packed);
    });
    this.pending.push(task);
  }

  /** Queues the precompressed siblings of a file (see compress.ts), each listed like any other file. */
  private writeSiblings(entry: FileEntry, bytes: Uint8Array): void {
    if (bytes.byteLength < SIBLING_MIN_BYTES || !wantsSiblings(entry.path)) return;
    const task = this.compressLimit(async () => {
      let made = this.siblingsBySha.get(entry.sha256);
      if (!made) {
        made = siblingsOf(entry.path, bytes).then((list) => list.map((s) => ({ suffix: s.path.slice(entry.path.length), bytes: s.bytes })));
        // Only small files are remembered (the repeated ones are scripts of a few hundred KB); big ones would stay in memory.
        if (bytes.byteLength <= DEDUPE_MAX_BYTES) this.siblingsBySha.set(entry.sha256, made);
      }
      for (const sibling of await made) {
        const rel = `${entry.path}${sibling.suffix}`;
        if (this.entries.has(rel)) throw new Error(`file written twice: ${rel}`);
        this.entries.set(rel, { path: rel, bytes: sibling.bytes.byteLength, sha256: sha256Hex(sibling.bytes) });
        const abs = join(this.root, rel);
        await this.ensureDir(dirname(abs));
        await writeFile(abs, sibling.bytes);
      }
    });
    this.pending.push(task);
  }

  /** Waits for every queued write, rethrowing the first failure. */
  async flush(): Promise<void> {
    const batch = this.pending.splice(0);
    await Promise.all(batch);
  }

  /** Adds files that another tool wrote under `relDir` (for example Pagefind's index) to the manifest. */
  async adoptDirectory(relDir: string): Promise<void> {
    const base = join(this.root, normalizeRel(relDir));
    const walk = async (dir: string): Promise<void> => {
      const dirents = await readdir(dir, { withFileTypes: true });
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const d of dirents) {
        const abs = join(dir, d.name);
        if (d.isDirectory()) await walk(abs);
        else if (d.isFile()) {
          const rel = relative(this.root, abs).split(sep).join('/');
          const bytes = await readFile(abs);
          const entry = { path: rel, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
          this.entries.set(rel, entry);
          this.writeSiblings(entry, bytes);
        }
      }
    };
    await walk(base);
  }

  /**
   * Adds one file that another tool wrote at `path` (for example a database) to the manifest, hashed as a stream
   * (it may be hundreds of MB); it gets no precompressed siblings. Returns its entry.
   */
  async adoptFile(path: string): Promise<FileEntry> {
    const rel = normalizeRel(path);
    if (this.entries.has(rel)) throw new Error(`file written twice: ${rel}`);
    const abs = join(this.root, rel);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(abs)) hash.update(chunk as Buffer);
    const entry = { path: rel, bytes: (await stat(abs)).size, sha256: hash.digest('hex') };
    this.entries.set(rel, entry);
    return entry;
  }

  /** Where a file of the snapshot is written, for a tool that writes it itself (then `adoptFile`). */
  async pathFor(path: string): Promise<string> {
    const abs = join(this.root, normalizeRel(path));
    await this.ensureDir(dirname(abs));
    return abs;
  }

  /** The manifest's file list: sorted by path, so the same files always give the same list. */
  files(): FileEntry[] {
    return [...this.entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.madeDirs.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.madeDirs.add(dir);
  }
}

function check(path: string, schema: z.ZodType, value: unknown): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new Error(`refusing to write ${path}: ${first?.path.join('.') ?? ''} ${first?.message ?? 'invalid'}`);
  }
}

function normalizeRel(path: string): string {
  const rel = safeRelPath(path.split(sep).join('/'));
  if (rel === null) throw new Error(`not a path inside the snapshot: ${path}`);
  return rel;
}
