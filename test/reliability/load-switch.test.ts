import { spawn } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ErrorBody,
  LAYOUT,
  Manifest,
  MetaFile,
  ResponseSchemas,
  TopProductCodesFile,
  type ClearanceRecord,
  type OperationName,
  type ProductCodeEntry,
} from '../../src/contract/index.ts';
import { FIXTURE_SOURCES, buildFixture } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords, envelope, startServer, type Running } from '../server/helpers.ts';
import { PMN, writeEditedPmn } from '../sync/edit-fixture.ts';
import { SEED, figure, seeded, sha256 } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * A bounded load of every kind of request on 127.0.0.1 while the snapshot is rebuilt and switched twice. Every
 * answer is kept and checked afterwards against the files of the one snapshot it names (by its sourceState): the
 * data, the page, the cursor's continuation and the static files' bytes must all come from that snapshot, whole.
 */
/** Requests on each snapshot before the next switch (and after the last); the builds run while the load goes on. */
const PHASE = 600;
/** A bound on the whole run, whatever the machine's speed. */
const MAX_REQUESTS = 12_000;
const WORKERS = 8;
const EPOCHS = [1_767_225_600, 1_767_312_000, 1_767_398_400];

type Truth = {
  manifest: Manifest;
  records: Map<string, ClearanceRecord>;
  kNumbers: string[];
  codes: Map<string, ProductCodeEntry>;
  codeList: string[];
  meta: MetaFile;
  top: TopProductCodesFile;
  fileSha: Map<string, string>;
};

async function truthOf(dir: string): Promise<Truth> {
  const manifest = Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
  const records = await allRecords(dir);
  const codes = await allProductCodes(dir);
  return {
    manifest,
    records: new Map(records.map((r) => [r.kNumber, r])),
    kNumbers: records.map((r) => r.kNumber),
    codes: new Map(codes.map((c) => [c.productCode, c])),
    codeList: codes.map((c) => c.productCode),
    meta: MetaFile.parse(JSON.parse(await readFile(join(dir, LAYOUT.meta), 'utf8'))),
    top: TopProductCodesFile.parse(JSON.parse(await readFile(join(dir, LAYOUT.topProductCodes), 'utf8'))),
    fileSha: new Map([...manifest.files.map((f) => [f.path, f.sha256] as const), [LAYOUT.manifest, sha256(await readFile(join(dir, LAYOUT.manifest)))]]),
  };
}

/** One request as sent and its answer as received, checked after the run. */
type Exchange = {
  kind: OperationName | 'healthz' | 'file';
  input: Record<string, unknown>;
  status: number;
  json: unknown;
  /** Static files: the path, the bytes' sha256 and the ETag. */
  file?: { path: string; sha256: string; etag: string | null };
  /** Catalog pages: the key the page continues after, and the snapshot that issued the cursor. */
  after?: { key: string | null; issuedBy: string | null };
  error?: string;
};

let dir: string;
let out: string;
let server: Running;
const builds: { id: string; dir: string }[] = [];

beforeAll(async () => {
  dir = await testTempDir('device-510k-load-');
  out = join(dir, 'snapshot');
  const first = await buildFixture({ out, epoch: EPOCHS[0] });
  builds.push({ id: first.manifest.snapshotId, dir: first.dir });
  server = await startServer({ snapshotPath: out, watch: true, pollMs: 100 });
});
afterAll(async () => {
  await server?.close();
});

/** The next upstream file: device names changed, rows removed, new K numbers added (as the nightly sync would see). */
async function editedSources(step: number, base: Truth): Promise<string[]> {
  const pmn = FIXTURE_SOURCES[1] as string;
  const lines = (await readFile(pmn, 'latin1')).split('\r\n').slice(1).filter((l) => l !== '');
  const ks = lines.map((l) => l.split('|')[PMN.KNUMBER] as string).filter((k) => base.records.has(k));
  const pick = (from: number, n: number) => ks.slice(from, from + n);
  const to = join(dir, `pmn-step-${step}.txt`);
  await writeEditedPmn(pmn, to, {
    set: Object.fromEntries(pick(step * 20, 15).map((k) => [k, { [PMN.DEVICENAME]: `Revised device ${step} ${k}`, [PMN.APPLICANT]: `Applicant ${step}` }])),
    remove: pick(step * 20 + 15, 5),
    add: Array.from({ length: 6 }, (_, i) => ({ kNumber: `K99${step}${String(100 + i).padStart(3, '0')}`, from: ks[i] as string })),
  });
  return FIXTURE_SOURCES.map((s) => (s === pmn ? to : s));
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run build` in a child process; resolves with the snapshot it published. */
async function buildInChild(sources: string[], out: string, epoch: number): Promise<{ id: string; dir: string }> {
  const args = ['--import', 'tsx', 'build/cli.ts', '--quiet', '--out', out, ...sources.flatMap((s) => ['--source', s])];
  const child = spawn(process.execPath, args, { cwd: REPO, env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the build failed (${code}): ${stderr.slice(0, 500)}`);
  const dir = await realpath(out);
  const manifest = Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
  return { id: manifest.snapshotId, dir };
}

const JSON_HEADERS = { 'content-type': 'application/json', 'accept-encoding': 'br, gzip' };

async function exchange(kind: Exchange['kind'], input: Record<string, unknown>, extra: Partial<Exchange> = {}): Promise<Exchange> {
  try {
    if (kind === 'healthz') {
      const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(15_000) });
      return { kind, input, status: res.status, json: await res.json(), ...extra };
    }
    if (kind === 'file') {
      const path = input.path as string;
      const res = await fetch(`${server.url}/snapshot/${path}`, { signal: AbortSignal.timeout(15_000) });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const json = res.status === 200 ? undefined : JSON.parse(new TextDecoder().decode(bytes));
      return { kind, input, status: res.status, json, file: { path, sha256: sha256(bytes), etag: res.headers.get('etag') }, ...extra };
    }
    const res = await fetch(`${server.url}/v1/query`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(envelope(kind, input)),
      signal: AbortSignal.timeout(15_000),
    });
    return { kind, input, status: res.status, json: await res.json(), ...extra };
  } catch (err) {
    return { kind, input, status: 0, json: null, error: (err as Error).message, ...extra };
  }
}

describe('load while the snapshot is rebuilt and switched twice', () => {
  it('no request fails, and every answer is whole and from one snapshot', async () => {
    const truth0 = await truthOf(builds[0]?.dir as string);
    const rng = seeded(SEED + 7);
    const words = [...new Set(truth0.kNumbers.flatMap((k) => (truth0.records.get(k)?.deviceName ?? '').toLowerCase().split(/\W+/)).filter((w) => w.length > 3))];
    const addedKs = [1, 2].flatMap((step) => Array.from({ length: 6 }, (_, i) => `K99${step}${String(100 + i).padStart(3, '0')}`));
    const kPool = [...truth0.kNumbers, ...addedKs, 'K000001'];
    const codePool = [...truth0.codeList, 'QQQ'];
    const filePool = [LAYOUT.manifest, LAYOUT.meta, LAYOUT.recordIndex, ...truth0.manifest.files.filter((f) => f.path.startsWith('records/K')).map((f) => f.path), 'records/K9911.json', 'records/K9921.json'];

    const log: Exchange[] = [];
    let sent = 0;
    let stop = false;
    /** One worker: mixed requests, and a catalog walk that follows its cursors across the switches. */
    const worker = async (n: number) => {
      type Cursor = { kind: 'clearance' | 'product-code'; value: string; key: string; issuedBy: string };
      let cursor = null as Cursor | null;
      while (!stop && sent < MAX_REQUESTS) {
        sent++;
        const roll = rng.int(100);
        let x: Exchange;
        if (n % 4 === 0 || roll < 15) {
          const kind: 'clearance' | 'product-code' = cursor?.kind ?? (rng.int(3) === 0 ? 'product-code' : 'clearance');
          const input = { kind, limit: 1 + rng.int(60), cursor: cursor?.value ?? null };
          x = await exchange('device-510k.catalog', input, { after: { key: cursor?.key ?? null, issuedBy: cursor?.issuedBy ?? null } });
          const page = (x.json as { page?: { nextCursor: string | null; snapshotToken: string } } | null)?.page;
          const items = (x.json as { data?: { items?: { kNumber?: string; productCode: string }[] } } | null)?.data?.items ?? [];
          const last = items[items.length - 1];
          cursor = page?.nextCursor && last ? { kind, value: page.nextCursor, key: last.kNumber ?? last.productCode, issuedBy: page.snapshotToken } : null;
        } else if (roll < 35) x = await exchange('device-510k.detail', { id: rng.pick(kPool) });
        else if (roll < 45) x = await exchange('device-510k.classification', { productCode: rng.pick(codePool) });
        else if (roll < 52) x = await exchange('device-510k.top-product-codes', { limit: 1 + rng.int(100) });
        else if (roll < 58) x = await exchange('device-510k.meta', {});
        else if (roll < 80) {
          const query = rng.int(5) === 0 ? '' : rng.int(2) === 0 ? rng.pick(words) : `${rng.pick(words)} ${rng.pick(words).slice(0, 3)}`;
          const productCode = rng.int(6) === 0 ? rng.pick(truth0.codeList) : null;
          x = await exchange('device-510k.search', { query, applicant: null, productCode, yearFrom: rng.int(4) === 0 ? 1990 + rng.int(30) : null, yearTo: null, page: 1 + rng.int(3), pageSize: 1 + rng.int(50) });
        } else if (roll < 85) x = await exchange('healthz', {});
        else x = await exchange('file', { path: rng.pick(filePool) });
        log.push(x);
      }
    };

    const running = Promise.all(Array.from({ length: WORKERS }, (_, n) => worker(n)));
    const switches: { at: number; id: string }[] = [];
    let mark = 0;
    const phaseDone = () => vi.waitFor(() => expect(sent).toBeGreaterThanOrEqual(Math.min(mark + PHASE, MAX_REQUESTS)), { timeout: 60_000, interval: 10 });
    for (const step of [1, 2] as const) {
      await phaseDone();
      const sources = await editedSources(step, truth0);
      // The rebuild runs as the nightly one does: the build CLI in a process of its own, publishing by the link.
      const next = await buildInChild(sources, out, EPOCHS[step] as number);
      builds.push(next);
      await vi.waitFor(() => expect(server.app.snapshots.current?.id).toBe(next.id), { timeout: 15_000, interval: 10 });
      switches.push({ at: sent, id: next.id });
      mark = sent;
    }
    await phaseDone();
    stop = true;
    await running;

    // Every snapshot stays on disk (the build keeps the previous two), so each can be read back as the truth.
    const truths = new Map<string, Truth>();
    for (const b of builds) {
      const t = await truthOf(b.dir);
      truths.set(t.manifest.generatedAt, t);
    }
    expect(new Set([...truths.values()].map((t) => t.manifest.snapshotId)).size).toBe(3);
    const byId = new Map([...truths.values()].map((t) => [t.manifest.snapshotId, t]));

    const failures: string[] = [];
    const perSnapshot = new Map<string, number>();
    const fail = (x: Exchange, why: string) => failures.push(`${x.kind} ${JSON.stringify(x.input).slice(0, 120)} → ${x.status}: ${why}`);
    for (const x of log) {
      try {
        checkExchange(x, truths, byId, perSnapshot);
      } catch (err) {
        fail(x, (err as Error).message.slice(0, 300));
      }
    }
    figure('load: requests sent', log.length);
    figure('load: failed or inconsistent answers', failures.length);
    figure('load: snapshot switches under load', switches.length);
    figure('load: answers per snapshot', [...perSnapshot].map(([id, n]) => `${id} ${n}`).join(', '));
    const byStatus = new Map<number, number>();
    for (const x of log) byStatus.set(x.status, (byStatus.get(x.status) ?? 0) + 1);
    figure('load: answers by status', [...byStatus].map(([s, n]) => `${s} ${n}`).join(', '));
    expect(failures.slice(0, 10)).toEqual([]);
    expect(log.length).toBe(sent);
    // The three snapshots each answered part of the load: the switches happened under it.
    expect(perSnapshot.size).toBe(3);
  }, 120_000);
});

/** Checks one exchange against the snapshot it names; throws with the reason when it is not whole or not right. */
function checkExchange(x: Exchange, truths: Map<string, Truth>, byId: Map<string, Truth>, perSnapshot: Map<string, number>): void {
  if (x.error) throw new Error(`no answer: ${x.error}`);
  if (x.kind === 'file' && x.status === 200) {
    const f = x.file as NonNullable<Exchange['file']>;
    // A file is whole when its bytes hash to the digest its ETag names, and that digest is the file's in one of the
    // snapshots. The ETag is the sha256 itself, or (bytes compressed on the fly, which fetch undoes) W/"<sha256>-gz";
    // a precompressed copy has the copy's own sha256.
    const owner = [...byId.values()].find((t) => t.fileSha.get(f.path) === f.sha256);
    if (!owner) throw new Error(`${f.path}: bytes from no snapshot`);
    const tag = String(x.file?.etag);
    const copies = [`${f.path}.br`, `${f.path}.gz`].map((p) => owner.fileSha.get(p)).filter((d) => d !== undefined);
    expect([`"${f.sha256}"`, `W/"${f.sha256}-gz"`, `W/"${f.sha256}-br"`, ...copies.map((d) => `"${d}"`)]).toContain(tag);
    perSnapshot.set(owner.manifest.snapshotId, (perSnapshot.get(owner.manifest.snapshotId) ?? 0) + 1);
    return;
  }
  const state = (x.json as { sourceState?: { snapshotGeneratedAt?: string; sourceRevision?: string } }).sourceState;
  const t = truths.get(state?.snapshotGeneratedAt ?? '');
  if (!t) throw new Error(`names no known snapshot: ${state?.snapshotGeneratedAt}`);
  expect(state?.sourceRevision).toBe(t.manifest.sourceRevision);
  perSnapshot.set(t.manifest.snapshotId, (perSnapshot.get(t.manifest.snapshotId) ?? 0) + 1);

  if (x.kind === 'healthz') {
    expect(x.status).toBe(200);
    return;
  }
  if (x.kind === 'file') {
    expect(x.status).toBe(404);
    expect(ErrorBody.parse(x.json).error.code).toBe('not_found');
    expect(t.fileSha.has(x.file?.path as string)).toBe(false);
    return;
  }
  if (x.status !== 200) {
    const body = ErrorBody.parse(x.json);
    if (x.kind === 'device-510k.detail') {
      expect([x.status, body.error.code]).toEqual([404, 'record_not_found']);
      expect(t.records.has(x.input.id as string)).toBe(false);
    } else if (x.kind === 'device-510k.classification') {
      expect([x.status, body.error.code]).toEqual([404, 'product_code_not_found']);
      expect(t.codes.has(x.input.productCode as string)).toBe(false);
    } else throw new Error(`${body.error.code}: ${body.error.message}`);
    return;
  }
  const parsed = ResponseSchemas[x.kind].safeParse(x.json);
  if (!parsed.success) throw new Error(JSON.stringify(parsed.error.issues.slice(0, 2)));
  const answer = x.json as { data: Record<string, unknown>; page?: { snapshotToken: string; nextCursor: string | null; total: number }; sourceState: { warnings: string[] } };
  switch (x.kind) {
    case 'device-510k.detail':
      expect(answer.data.record).toEqual(t.records.get(x.input.id as string));
      break;
    case 'device-510k.classification': {
      const { clearanceCount: _count, ...classification } = t.codes.get(x.input.productCode as string) as ProductCodeEntry;
      expect(answer.data).toEqual(classification);
      break;
    }
    case 'device-510k.top-product-codes':
      expect(answer.data.codes).toEqual(t.top.codes.slice(0, x.input.limit as number));
      break;
    case 'device-510k.meta':
      expect(answer.data).toEqual(t.meta);
      break;
    case 'device-510k.search': {
      expect(answer.page?.snapshotToken).toBe(t.manifest.snapshotId);
      const items = answer.data.items as ClearanceRecord[];
      for (const item of items) expect(item).toEqual(t.records.get(item.kNumber));
      if (x.input.productCode) for (const item of items) expect(item.productCode).toBe(x.input.productCode);
      break;
    }
    case 'device-510k.catalog': {
      expect(answer.page?.snapshotToken).toBe(t.manifest.snapshotId);
      const clearances = x.input.kind === 'clearance';
      const keys = clearances ? t.kNumbers : t.codeList;
      const after = x.after?.key ?? null;
      const start = after === null ? 0 : keys.findIndex((k) => k > after);
      const expected = start < 0 ? [] : keys.slice(start, start + (x.input.limit as number));
      const items = answer.data.items as (ClearanceRecord | ProductCodeEntry)[];
      expect(items.map((i) => ('kNumber' in i ? i.kNumber : i.productCode))).toEqual(expected);
      for (const item of items) expect(item).toEqual('kNumber' in item ? t.records.get(item.kNumber) : t.codes.get(item.productCode));
      expect(answer.page?.total).toBe(keys.length);
      expect(answer.page?.nextCursor !== null).toBe(start >= 0 && start + expected.length < keys.length);
      // A cursor issued by another snapshot goes on after its key here, and says so.
      const changed = x.after?.issuedBy !== null && x.after?.issuedBy !== undefined && x.after.issuedBy !== t.manifest.snapshotId;
      expect(answer.sourceState.warnings.length > 0).toBe(changed);
      break;
    }
    default:
      throw new Error(`unexpected kind ${x.kind}`);
  }
}
