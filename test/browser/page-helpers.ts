import { createRequire } from 'node:module';
import { cp, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { writePagefindIndex } from '../../build/index/pagefind.ts';
import { runMirror } from '../../build/mirror/run.ts';
import { SnapshotWriter } from '../../build/write/writer.ts';
import { createApp } from '../../src/server/app.ts';
import type { Logger } from '../../src/server/log.ts';
import type { Truth } from './fixture-truth.ts';
import { startNginxHost } from './nginx-host.ts';
import { PUBLIC_DIR, startStaticHost } from './static-host.ts';
import { startWorkerHost } from './worker-host.ts';

export const silent: Logger = { request: () => {}, info: () => {}, error: () => {} };

export type Host = { url: string; close: () => Promise<void> };

/**
 * A copy of the snapshot whose browser index is rebuilt in `parts` Pagefind indexes, so that the static page's
 * merging of indexes (results, totals and facet counts summed over them) is tested on the fixture too, whose
 * clearances fit in one bucket of the real size.
 */
export async function splitCopy(snapshot: string, truth: Truth, parts: number): Promise<string> {
  const dir = join(await mkdtemp(join(tmpdir(), 'device-510k-split-')), 'snapshot');
  await cp(await realpath(snapshot), dir, { recursive: true });
  await rm(join(dir, 'pagefind'), { recursive: true, force: true });
  const writer = new SnapshotWriter(dir);
  await writePagefindIndex([...truth.records.values()], truth.deviceTypes, writer, { bucketRecords: Math.ceil(truth.records.size / parts) });
  await writer.flush();
  return dir;
}

/** A mirror of `snapshot` made by `npm run mirror`'s code from our server, the way an operator would make one. */
export async function mirrorOf(snapshot: string): Promise<string> {
  const origin = await createApp({ snapshotPath: snapshot, publicDir: null, syncStatePath: null, pollMs: 0, watch: false, logger: silent });
  const { url } = await origin.listen(0, '127.0.0.1');
  try {
    const to = join(await mkdtemp(join(tmpdir(), 'device-510k-mirror-')), 'snapshot');
    await runMirror({ from: `${url}/snapshot`, to });
    return to;
  } finally {
    await origin.close({ graceMs: 1000 });
  }
}

export async function startHost(
  mode: 'server' | 'static',
  snapshot: string,
  options: { via?: 'node' | 'nginx' | 'worker'; syncStatePath?: string | null } = {},
): Promise<Host> {
  if (options.via === 'nginx') return startNginxHost(await mirrorOf(snapshot));
  if (options.via === 'worker') {
    if (mode === 'static') throw new Error('The Worker host answers the API: start it in server mode');
    return startWorkerHost(snapshot);
  }
  if (mode === 'static') return startStaticHost(await realpath(snapshot));
  const app = await createApp({ snapshotPath: snapshot, publicDir: PUBLIC_DIR, syncStatePath: options.syncStatePath ?? null, pollMs: 0, watch: false, logger: silent });
  const { url } = await app.listen(0, '127.0.0.1');
  return { url: `${url}/`, close: () => app.close({ graceMs: 1000 }) };
}

export const statusOf = (page: Page) => page.locator('#status').innerText();

export async function waitForStatus(page: Page, pattern: RegExp): Promise<string> {
  await page.waitForFunction((source) => new RegExp(source).test(document.getElementById('status')?.textContent ?? ''), pattern.source, {
    timeout: 20_000,
  });
  return statusOf(page);
}

export const totalIn = (status: string): number => Number(/^([\d,]+) clearance/.exec(status)?.[1]?.replace(/,/g, '') ?? NaN);

export const listedKNumbers = (page: Page): Promise<string[]> => page.locator('#list .result-meta .k').allInnerTexts();

/** Every console error and uncaught exception of a page, from the moment it is created. */
export function collectErrors(page: Page, into: string[]): void {
  page.on('pageerror', (err) => into.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') into.push(`console: ${msg.text()}`);
  });
}

/** Whether the service behind `url` advertises the search extensions (qualifiers, sorts, facets, export) in meta. */
export async function advertisesExtensions(url: string): Promise<boolean> {
  const meta = (await fetch(new URL('snapshot/meta.json', url)).then((r) => r.json())) as { qualifiers?: unknown[] };
  return Array.isArray(meta.qualifiers) && meta.qualifiers.length > 0;
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's audit of the page as it is now: the violations of serious or critical impact, as short strings. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}
