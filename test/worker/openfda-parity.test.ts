import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import type { Running } from '../server/helpers.ts';
import { startNodeAndWorkers, type NamedWorker } from './hosts.ts';

/**
 * /device/510k.json and /device/classification.json on Node and on the Worker (over R2 and over static assets, and
 * over assets with a search cache of 0 bytes, so that every request reads the chunked index's files again): the same
 * status, headers that matter and bytes, once the time members and the host in `Link` are blanked.
 */
let node: Running;
let workers: NamedWorker[];
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ node, workers, close } = await startNodeAndWorkers(await buildFixtureSnapshot(), { uncached: true }));
});
afterAll(async () => {
  await close?.();
});

const blank = (text: string) => text.replace(/"servedAt":"[^"]*"/g, '"servedAt":""');
const linkPath = (link: string | null) => (link === null ? null : link.replace(/<https?:\/\/[^/]+/, '<'));

const PATHS = [
  '/device/510k.json',
  '/device/510k.json?search=device_name:catheter+AND+decision_date:[19800101+TO+20261231]&limit=5',
  '/device/510k.json?search=catheter+AND+NOT+device_name:"balloon+catheter"&limit=5',
  '/device/510k.json?search=applicant:medical+AND+device_name:cath*&sort=applicant.exact:asc&limit=3',
  '/device/510k.json?search=k_number:K801853',
  '/device/510k.json?search=_missing_:device_name',
  '/device/510k.json?count=device_name',
  '/device/510k.json?search=date_received:[20000101+TO+20101231]&count=applicant.exact&limit=5',
  '/device/510k.json?search=product_code:DTB&limit=3&skip=3',
  '/device/510k.json?count=product_code&limit=10',
  '/device/510k.json?count=decision_date',
  '/device/510k.json?count=device_name&search=openfda.device_class:3',
  '/device/510k.json?sort=decision_date:asc&limit=4&search_after=0%3D19800813%3B1%3DK801853',
  '/device/510k.json?search=device_name:zzzznotaword',
  '/device/510k.json?search=city:Rochester',
  '/device/510k.json?bogus=1',
  '/device/classification.json?search=device_class:3&limit=2',
  '/device/classification.json?count=medical_specialty',
];

describe('openFDA endpoints answer the same on Node and on the Worker', () => {
  it.each(PATHS)('GET %s', async (path) => {
    const fromNode = await fetch(node.url + path);
    const nodeText = blank(await fromNode.text());
    expect(fromNode.headers.get('access-control-allow-origin')).toBe('*');
    for (const { name, worker } of workers) {
      const r = await fetch(worker.url + path);
      expect({ name, status: r.status }).toEqual({ name, status: fromNode.status });
      expect(r.headers.get('content-type')).toBe(fromNode.headers.get('content-type'));
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(linkPath(r.headers.get('link'))).toBe(linkPath(fromNode.headers.get('link')));
      expect(blank(await r.text()), name).toBe(nodeText);
    }
  });

  it('HEAD answers the status and headers without a body, on both hosts', async () => {
    for (const url of [node.url, ...workers.map((w) => w.worker.url)]) {
      const r = await fetch(`${url}/device/510k.json?search=product_code:DTB&limit=1`, { method: 'HEAD' });
      expect(r.status).toBe(200);
      expect(r.headers.get('link')).toMatch(/rel="next"$/);
      expect(await r.text()).toBe('');
    }
  });
});
