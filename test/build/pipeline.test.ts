import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { lstat, stat, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, RecordShard, ShardIndex, ProductCodeShard } from '../../src/contract/index.ts';
import { buildFixture, FIXTURE_EPOCH, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

async function tree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const abs = join(d, e.name);
      if (e.isDirectory()) await walk(abs);
      else out.set(relative(dir, abs), createHash('sha256').update(await readFile(abs)).digest('hex'));
    }
  };
  await walk(dir);
  return out;
}

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'));

describe('the snapshot build', () => {
  it('is deterministic: the same inputs give byte-identical files; the generation time shows only in the manifest, the history and the feeds', async () => {
    const a = await buildFixture();
    const b = await buildFixture();
    const c = await buildFixture({ epoch: 1_800_000_000 });
    const [ta, tb, tc] = await Promise.all([tree(a.dir), tree(b.dir), tree(c.dir)]);
    expect([...tb.entries()]).toEqual([...ta.entries()]);
    expect(b.manifest.snapshotId).toBe(a.manifest.snapshotId);
    // The history records when each build ran (its baseline here), and the feeds say when they were updated.
    const differing = [...ta.keys()].filter((p) => ta.get(p) !== tc.get(p));
    expect(differing.filter((p) => p !== LAYOUT.manifest && !p.startsWith('history/') && !p.startsWith('feeds/'))).toEqual([]);
    expect(differing).toContain(LAYOUT.manifest);
    expect(c.manifest.generatedAt).toBe('2027-01-15T08:00:00.000Z');
  });

  it('lists every file in the manifest with its size and sha256', async () => {
    const { dir, manifest } = await buildFixture();
    const all = await tree(dir);
    Manifest.parse(manifest);
    // Beside each record shard and lineage shard, its host copy (records/K….json.gz, lineage/…/K….bin.gz,
    // docs/deploy.md), which no manifest lists.
    const shards = manifest.files.filter((f) => /^records\/K[^/]*\.json$|^lineage\/(predicates|descendants)\/[^/]*\.bin$/.test(f.path)).map((f) => `${f.path}.gz`);
    expect(shards.filter((p) => p.startsWith('records/')).length).toBeGreaterThan(0);
    expect(shards.filter((p) => p.startsWith('lineage/')).length).toBeGreaterThan(0);
    for (const copy of shards) expect(all.has(copy), copy).toBe(true);
    const files = new Map([...all].filter(([p]) => !shards.includes(p)));
    expect(manifest.files.map((f) => f.path)).toEqual([...files.keys()].filter((p) => p !== LAYOUT.manifest).sort());
    for (const f of manifest.files) expect(files.get(f.path)).toBe(f.sha256);
    expect(manifest.counts.files).toBe(files.size);
  });

  it('shards records by K-number prefix in ascending order, each record exactly once', async () => {
    const { dir, manifest } = await buildFixture();
    const index = ShardIndex.parse(await readJson(join(dir, LAYOUT.recordIndex)));
    const all: string[] = [];
    for (const shard of index.shards) {
      const items = RecordShard.parse(await readJson(join(dir, shard.path)));
      expect(items).toHaveLength(shard.count);
      expect(items.every((r) => r.kNumber.startsWith(shard.id))).toBe(true);
      expect(items[0]?.kNumber).toBe(shard.first);
      expect(items.at(-1)?.kNumber).toBe(shard.last);
      all.push(...items.map((r) => r.kNumber));
    }
    expect(all).toEqual([...all].sort());
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(manifest.counts.records);
    expect(index.total).toBe(manifest.counts.records);
  });

  it('lists codes only seen on clearances in the product-code shards, with null classification', async () => {
    const { dir } = await buildFixture();
    const index = ShardIndex.parse(await readJson(join(dir, LAYOUT.productCodeIndex)));
    const entries = (await Promise.all(index.shards.map(async (s) => ProductCodeShard.parse(await readJson(join(dir, s.path)))))).flat();
    const bsp = entries.find((e) => e.productCode === 'BSP');
    expect(bsp).toMatchObject({ deviceType: null, deviceClass: null, definition: null });
    expect(bsp?.clearanceCount).toBeGreaterThan(0);
    expect(entries.map((e) => e.productCode)).toEqual(entries.map((e) => e.productCode).sort());
    const top = (await readJson(join(dir, LAYOUT.topProductCodes))).codes as { code: string; count: number }[];
    for (let i = 1; i < top.length; i++) {
      const [p, q] = [top[i - 1]!, top[i]!];
      expect(p.count > q.count || (p.count === q.count && p.code < q.code)).toBe(true);
    }
    const fromEntries = entries.filter((e) => e.clearanceCount > 0).map((e) => ({ code: e.productCode, count: e.clearanceCount }));
    expect(top).toEqual(expect.arrayContaining(fromEntries));
    expect(top).toHaveLength(fromEntries.length);
  });

  it('reads zipped sources exactly like plain ones', async () => {
    const dir = await testTempDir('device-510k-zip-');
    const zipped: string[] = [];
    for (const [i, src] of FIXTURE_SOURCES.entries()) {
      // Edge folders are not FDA files: they are read from their folder either way.
      if ((await stat(src)).isDirectory()) {
        zipped.push(src);
        continue;
      }
      const name = src.split('/').pop() as string;
      const zipPath = join(dir, `${i}-${name}.zip`);
      await writeFile(zipPath, zipSync({ [name]: new Uint8Array(await readFile(src)) }));
      zipped.push(zipPath);
    }
    const plain = await buildFixture();
    const fromZip = await buildFixture({ sources: zipped });
    const [tp, tz] = await Promise.all([tree(plain.dir), tree(fromZip.dir)]);
    const records = (t: Map<string, string>) => [...t].filter(([p]) => p.startsWith('records/') || p.startsWith('product-codes/'));
    expect(records(tz)).toEqual(records(tp));
    // Only the file names in meta.json and report.json differ (they name the zip entries), hence the bytes.
    expect({ ...fromZip.manifest.counts, bytes: 0 }).toEqual({ ...plain.manifest.counts, bytes: 0 });
    expect(fromZip.report.sources[0]?.name).toMatch(/\.zip!openfda-510k-sample\.json$/);
  });

  it('a failed build leaves the published snapshot untouched and no staging directory behind', async () => {
    const good = await buildFixture();
    const before = await readlink(good.out);
    const bad = join(await testTempDir('device-510k-bad-'), 'not-fda.txt');
    await writeFile(bad, 'this,is,not,an,fda,file\n');
    await expect(buildFixture({ out: good.out, sources: [...FIXTURE_SOURCES, bad] })).rejects.toThrow(/not a source this build reads/);
    expect(await readlink(good.out)).toBe(before);
    const builds = await readdir(join(good.out, '..', 'snapshot-builds'));
    expect(builds.filter((n) => n.startsWith('.staging'))).toEqual([]);
    expect((await lstat(join(good.out, LAYOUT.manifest))).isFile()).toBe(true);
  });

  it('switches a new build in atomically and keeps the previous one for in-flight readers', async () => {
    const first = await buildFixture();
    const second = await buildFixture({ out: first.out, epoch: 1_800_000_000 });
    expect(await readlink(first.out)).toBe(join('snapshot-builds', second.dir.split('/').pop() as string));
    expect((await lstat(join(first.dir, LAYOUT.manifest))).isFile()).toBe(true);
  });

  it('the CLI prints the closing summary and exits 0', async () => {
    const out = join(await testTempDir('device-510k-cli-'), 'snapshot');
    const args = ['tsx', 'build/cli.ts', '--out', out, ...FIXTURE_SOURCES.flatMap((s) => ['--source', s])];
    const stdout = execFileSync('npx', args, { encoding: 'utf8', env: { ...process.env, SOURCE_DATE_EPOCH: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(stdout).toMatch(/records\s+\d+/);
    expect(stdout).toMatch(/skipped rows\s+\d+\n\s+\d+\s+not a 510\(k\): De Novo number/);
    expect(stdout).toMatch(/seconds\s+[\d.]+/);
    expect(stdout).toMatch(/page copies\s+\d+ precompressed files/);
  }, 180_000);

  it('writes the chunked search index always, and a Pagefind index only when asked with --pagefind', async () => {
    const listed = async (out: string) => new Set(Manifest.parse(await readJson(join(out, LAYOUT.manifest))).files.map((f) => f.path));
    const plain = await listed((await buildFixture()).out);
    expect(plain.has('search/chunks.json')).toBe(true);
    expect([...plain].filter((p) => p.startsWith(`${LAYOUT.pagefindDir}/`))).toEqual([]);
    const out = join(await testTempDir('device-510k-cli-pagefind-'), 'snapshot');
    const args = ['tsx', 'build/cli.ts', '--out', out, '--pagefind', '--quiet', ...FIXTURE_SOURCES.flatMap((s) => ['--source', s])];
    execFileSync('npx', args, { encoding: 'utf8', env: { ...process.env, SOURCE_DATE_EPOCH: String(FIXTURE_EPOCH) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const withPagefind = await listed(out);
    expect(withPagefind.has('search/chunks.json')).toBe(true);
    expect(withPagefind.has(`${LAYOUT.pagefindDir}/indexes.json`)).toBe(true);
    expect([...withPagefind].some((p) => p.endsWith('.pf_fragment'))).toBe(true);
    // The Pagefind index is all the option adds.
    expect([...withPagefind].filter((p) => !p.startsWith(`${LAYOUT.pagefindDir}/`)).sort()).toEqual([...plain].sort());
  }, 120_000);
});
