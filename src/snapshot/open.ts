import type { z } from 'zod';
import {
  LAYOUT,
  Manifest,
  MetaFile,
  RECORD_TABLE,
  SNAPSHOT_SCHEMA_VERSION,
  ShardIndex,
  TopProductCodesFile,
  recordTablePartPath,
  snapshotIdInput,
  type FileEntry,
} from '../contract/index.ts';
import { InvalidSnapshot } from './errors.ts';
import { toHex, type SnapshotStorage } from './storage.ts';

/** What a snapshot holds from the moment it is opened: its manifest and the small files every request needs. */
export type OpenedSnapshot = {
  manifest: Manifest;
  /** sha256 of manifest.json's bytes (the manifest cannot list itself). */
  manifestSha256: string;
  manifestBytes: Uint8Array;
  meta: MetaFile;
  /** meta.json's bytes without its final newline: the meta answer's data as it is. */
  metaJson: Uint8Array;
  topProductCodes: TopProductCodesFile;
  recordIndex: ShardIndex;
  productCodeIndex: ShardIndex;
  files: ReadonlyMap<string, FileEntry>;
};

const utf8 = new TextDecoder();

/** The files every answer needs: a damaged one makes the whole snapshot unusable, so it is refused at open. */
const REQUIRED = [LAYOUT.meta, LAYOUT.topProductCodes, LAYOUT.recordIndex, LAYOUT.productCodeIndex] as const;

/**
 * Opens and validates the snapshot whose manifest is `manifestBytes`, reading the rest from `storage`: the manifest
 * parsed once with the contract's schema, its id checked against its file list, the required files read and checked
 * against their sha256, and every shard and record-table part the indexes need listed. `checkFiles`, when given,
 * runs once the manifest is known and before anything else is read, and returns problems that refuse the snapshot.
 * Throws InvalidSnapshot, naming the first problems found.
 */
export async function openSnapshotFiles(
  storage: SnapshotStorage,
  manifestBytes: Uint8Array,
  checkFiles?: (files: readonly FileEntry[]) => Promise<string[]>,
): Promise<OpenedSnapshot> {
  const dir = storage.location;
  // The storage's asynchronous hash where it has one (Web Crypto in a Worker, native): the manifest and the file list
  // hashed here are megabytes at a million records, slow for a script hash in an isolate that has just started.
  const hex = async (bytes: Uint8Array) => toHex(storage.sha256Async ? await storage.sha256Async(bytes) : storage.sha256(bytes));
  const manifest = parseJson(dir, LAYOUT.manifest, manifestBytes, Manifest, FILE_LIST);
  const [manifestSha256, listSha256] = await Promise.all([hex(manifestBytes), hex(snapshotIdInput(manifest.files))]);
  // The id is a digest of the file list: an edited list (a path or digest changed by hand) is refused here.
  if (listSha256.slice(0, 16) !== manifest.snapshotId) {
    throw new InvalidSnapshot(dir, `${LAYOUT.manifest}'s snapshotId does not match its file list`);
  }
  const files = new Map(manifest.files.map((f) => [f.path, f]));
  const problems = checkFiles ? await checkFiles(manifest.files) : [];
  if (problems.length > 0) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
    throw new InvalidSnapshot(dir, `${problems.slice(0, 3).join('; ')}${more}`);
  }
  for (const required of REQUIRED) {
    if (!files.has(required)) throw new InvalidSnapshot(dir, `the manifest does not list ${required}`);
  }
  const readChecked = async (rel: string): Promise<Uint8Array> => {
    const bytes = await storage.read(rel).catch(() => {
      throw new InvalidSnapshot(dir, `${rel} cannot be read`);
    });
    const entry = files.get(rel) as FileEntry;
    if (bytes.length !== entry.bytes || (await hex(bytes)) !== entry.sha256) throw new InvalidSnapshot(dir, `${rel} does not match its sha256 in the manifest`);
    return bytes;
  };
  const [metaBytes, topBytes, recordIndexBytes, codeIndexBytes] = (await Promise.all(REQUIRED.map(readChecked))) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const recordIndex = parseJson(dir, LAYOUT.recordIndex, recordIndexBytes, ShardIndex, SHARD_LIST);
  const productCodeIndex = parseJson(dir, LAYOUT.productCodeIndex, codeIndexBytes, ShardIndex, SHARD_LIST);
  for (const index of [recordIndex, productCodeIndex]) {
    const unlisted = index.shards.find((s) => !files.has(s.path));
    if (unlisted) throw new InvalidSnapshot(dir, `shard ${unlisted.path} is not in the manifest`);
  }
  const parts = Math.ceil(recordIndex.shards.length / RECORD_TABLE.shardsPerPart);
  for (let part = 0; part < parts; part++) {
    if (!files.has(recordTablePartPath(part))) throw new InvalidSnapshot(dir, `the manifest does not list ${recordTablePartPath(part)}`);
  }
  return {
    manifest,
    manifestSha256,
    manifestBytes,
    meta: parseJson(dir, LAYOUT.meta, metaBytes, MetaFile),
    metaJson: withoutFinalNewline(metaBytes),
    topProductCodes: parseJson(dir, LAYOUT.topProductCodes, topBytes, TopProductCodesFile),
    recordIndex,
    productCodeIndex,
    files,
  };
}

function withoutFinalNewline(bytes: Uint8Array): Uint8Array {
  return bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, bytes.length - 1) : bytes;
}

/** A schema of an object one of whose members is a list: the list's entries may be checked one at a time. */
type ListSchema = z.ZodObject & { shape: Record<string, z.ZodType> };

/**
 * The long list of a file (`key`), and `plain`: true only for an entry the list's schema takes as it is, told without
 * the schema. Where code cannot be generated (a Worker), the schema makes several objects for each entry it checks:
 * at 1,000,000 records, tens of megabytes for the manifest's files and the record index's shards, which grow the
 * isolate's heap for good. An entry `plain` does not vouch for goes to the schema, which names what is wrong with it.
 */
export type LongList = { key: string; plain: (entry: unknown) => boolean };

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** An object with exactly the members `keys` (as JSON.parse makes one). */
function hasOnly(entry: unknown, keys: number): entry is Record<string, unknown> {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry) && Object.keys(entry).length === keys;
}

/** The manifest's files: FileEntry. */
export const FILE_LIST: LongList = {
  key: 'files',
  plain: (e) =>
    hasOnly(e, 3) && typeof e.path === 'string' && Number.isSafeInteger(e.bytes) && (e.bytes as number) >= 0 && typeof e.sha256 === 'string' && SHA256_HEX.test(e.sha256),
};

/** A shard index's shards: ShardIndex's entries. */
export const SHARD_LIST: LongList = {
  key: 'shards',
  plain: (e) =>
    hasOnly(e, 5) &&
    typeof e.id === 'string' &&
    typeof e.path === 'string' &&
    Number.isSafeInteger(e.count) &&
    (e.count as number) >= 1 &&
    typeof e.first === 'string' &&
    typeof e.last === 'string',
};

/**
 * A JSON file parsed and checked against its schema. With `list`, the rest of the file is checked first, then the
 * long list entry by entry (see LongList), kept as parsed rather than copied by the schema: its entries have no
 * default or transform, so what passes is what was parsed. A problem is named by its place in the file, as the
 * schema over the whole file names it.
 */
export function parseJson<S extends z.ZodType>(dir: string, rel: string, bytes: Uint8Array, schema: S, list?: LongList): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new InvalidSnapshot(dir, `${rel} is not valid JSON`);
  }
  const entries = list === undefined ? undefined : listOf(value, list.key);
  if (list === undefined || entries === undefined) return checked(dir, rel, value, schema);
  const entry = ((schema as unknown as ListSchema).shape[list.key] as z.ZodArray<z.ZodType>).element;
  const rest = checked(dir, rel, { ...(value as object), [list.key]: [] }, schema);
  for (let i = 0; i < entries.length; i++) {
    if (list.plain(entries[i])) continue;
    const parsed = entry.safeParse(entries[i]);
    if (!parsed.success) refuse(dir, rel, value, parsed.error.issues[0], [list.key, i]);
  }
  return { ...(rest as object), [list.key]: entries } as z.output<S>;
}

/** The array at `value[key]` when `value` is an object that has one there (else the whole schema says what is wrong). */
function listOf(value: unknown, key: string): unknown[] | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = (value as Record<string, unknown>)[key];
  return Array.isArray(entries) ? entries : undefined;
}

function checked<S extends z.ZodType>(dir: string, rel: string, value: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) refuse(dir, rel, value, parsed.error.issues[0], []);
  return parsed.data;
}

function refuse(dir: string, rel: string, value: unknown, issue: z.core.$ZodIssue | undefined, at: PropertyKey[]): never {
  const path = [...at, ...(issue?.path ?? [])].join('.');
  if (rel === LAYOUT.manifest && path === 'schemaVersion') {
    throw new InvalidSnapshot(dir, `${rel}'s schemaVersion is ${JSON.stringify((value as { schemaVersion?: unknown }).schemaVersion)} and this server reads schemaVersion ${SNAPSHOT_SCHEMA_VERSION}; build the snapshot again with npm run build`);
  }
  throw new InvalidSnapshot(dir, `${rel} does not match its schema at ${path || '(root)'}: ${issue?.message ?? 'invalid'}`);
}
