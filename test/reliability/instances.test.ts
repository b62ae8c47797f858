import { execFileSync } from 'node:child_process';
import { mkdir, readFile, realpath, rename, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { startNginx, type RunningNginx } from '../../build/instances/nginx.ts';
import { FIXTURE_SOURCES, buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, ask, expectOk, startServer, type Running } from '../server/helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Many stateless Node instances behind nginx, each with its own copy of the snapshot (what `npm run mirror`
 * keeps): while clients query through nginx, every instance switches to a new snapshot. No request fails, every
 * answer comes from one snapshot, and a catalog walk that crosses a switch is told so.
 */
const INSTANCES = 3;
const hasNginx = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let instances: Running[] = [];
let links: string[] = [];
let nginx: RunningNginx;
let oldDir: string;
let newDir: string;
let oldId: string;
let newId: string;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
const idOf = async (dir: string) => Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8'))).snapshotId;

/** Points a link at a directory the way the build and the mirror publish: a fresh link renamed over the old one. */
async function pointLink(link: string, target: string): Promise<void> {
  const tmp = `${link}.tmp-${Date.now()}`;
  await symlink(target, tmp, 'dir');
  await rename(tmp, link);
}

beforeAll(async () => {
  if (!hasNginx) return;
  oldDir = await realpath(await buildFixtureSnapshot());
  newDir = await realpath((await buildFixture({ sources: FIXTURE_SOURCES.slice(1) })).out);
  [oldId, newId] = await Promise.all([idOf(oldDir), idOf(newDir)]);
  const root = await testTempDir('device-510k-instances-');
  links = Array.from({ length: INSTANCES }, (_, i) => join(root, `instance-${i}`, 'snapshot'));
  for (const link of links) {
    await mkdir(join(link, '..'), { recursive: true });
    await pointLink(link, oldDir);
  }
  instances = await Promise.all(links.map((snapshotPath) => startServer({ snapshotPath, cursorSecret: 'one secret for every instance' })));
  nginx = await startNginx(await freePort(), instances.map((s) => s.url));
});
afterAll(async () => {
  await nginx?.stop();
  await Promise.all(instances.map((s) => s.close()));
});

describe.skipIf(!hasNginx)('many Node instances behind nginx', () => {
  it('switch the snapshot under load with no failed request and no answer mixing snapshots', async () => {
    const failures: string[] = [];
    let requests = 0;
    let walks = 0;
    let warnedWalks = 0;
    let stop = false;

    // Each client walks the catalog through nginx (so its pages land on different instances) and checks each page.
    const client = async () => {
      while (!stop) {
        walks++;
        let cursor: string | null = null;
        let token: string | null = null;
        let warned = false;
        do {
          requests++;
          const answer = await ask(nginx.url, 'device-510k.catalog', { kind: 'clearance', limit: 25, cursor });
          if (answer.status !== 200) {
            failures.push(`${answer.status} ${answer.text.slice(0, 200)}`);
            break;
          }
          const body = expectOk(answer, 'device-510k.catalog');
          expect([oldId, newId]).toContain(body.page.snapshotToken);
          if (token !== null && body.page.snapshotToken !== token) {
            // A page from another snapshot than the walk began on must say so.
            expect(body.sourceState.warnings.join(' ')).toMatch(/snapshot/i);
            warned = true;
          }
          token = body.page.snapshotToken;
          cursor = body.page.nextCursor;
        } while (cursor !== null && !stop);
        if (warned) warnedWalks++;
      }
    };
    const clients = Array.from({ length: 4 }, client);

    // Switch every instance, one after another, while the clients run: a few rounds of requests before the first
    // switch, between two, and after the last.
    const rounds = async () => {
      const from = requests;
      await vi.waitFor(() => expect(requests).toBeGreaterThanOrEqual(from + 20), { timeout: 20_000, interval: 10 });
    };
    await rounds();
    for (const [i, link] of links.entries()) {
      await pointLink(link, newDir);
      const result = await instances[i]?.app.reload();
      expect(result).toBe('switched');
      await rounds();
    }
    stop = true;
    await Promise.all(clients);

    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(50);
    for (const s of instances) expect(s.app.snapshots.current?.id).toBe(newId);
    // After the switch, every instance answers from the new snapshot.
    for (let i = 0; i < INSTANCES * 2; i++) {
      const body = expectOk(await ask(nginx.url, 'device-510k.catalog', { kind: 'clearance', limit: 1, cursor: null }), 'device-510k.catalog');
      expect(body.page.snapshotToken).toBe(newId);
    }
    console.log(`instances: ${INSTANCES}, requests: ${requests}, walks: ${walks} (${warnedWalks} across a switch, each warned), switches: ${INSTANCES}, failures: ${failures.length}`);
  });

  it('a cursor from one instance is accepted by another given the same CURSOR_SECRET', async () => {
    const [a, b] = instances;
    if (!a || !b) throw new Error('two instances are needed');
    const first = expectOk(await ask(a.url, 'device-510k.catalog', { kind: 'product-code', limit: 3, cursor: null }), 'device-510k.catalog');
    const next = expectOk(await ask(b.url, 'device-510k.catalog', { kind: 'product-code', limit: 3, cursor: first.page.nextCursor }), 'device-510k.catalog');
    const same = expectOk(await ask(a.url, 'device-510k.catalog', { kind: 'product-code', limit: 3, cursor: first.page.nextCursor }), 'device-510k.catalog');
    expect(next.data).toEqual(same.data);
    // The pages are the product-code entries the snapshot's shard files hold, code ascending: three, then the next three.
    const dir = first.page.snapshotToken === newId ? newDir : oldDir;
    expect(first.page.snapshotToken).toBe(await idOf(dir));
    const entries = (await allProductCodes(dir)).sort((x, y) => (x.productCode < y.productCode ? -1 : x.productCode > y.productCode ? 1 : 0));
    expect(entries.length).toBeGreaterThan(6);
    expect(first.data.items).toEqual(entries.slice(0, 3));
    expect(next.data.items).toEqual(entries.slice(3, 6));
  });
});
