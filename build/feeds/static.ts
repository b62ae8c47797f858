import type { ClearanceRecord } from '../../src/contract/index.ts';
import { atomFeed, compareNewest, jsonFeed, type Feed, type FeedRecord } from '../../src/feeds/render.ts';
import type { History } from '../history/history.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * The snapshot's static feeds, for hosts with no server: feeds/new.atom and feeds/new.json (the newest clearances),
 * feeds/removed.atom (the removals of the kept history), and one Atom feed per review panel
 * (feeds/panel/<code>.atom). Not one per product code: some 6,000 files would take a static host's file budget
 * (a 1,000,000-record snapshot already has about 19,200 files); GET /v1/feed serves those.
 *
 * Links are relative to the feed's file, for the usual layout of the page at the site's root and the snapshot
 * under snapshot/ (feeds/new.atom is snapshot/feeds/new.atom, so the page is ../../).
 */
export const STATIC_FEED_LIMIT = 50;

export type StaticFeedsInput = {
  records: readonly ClearanceRecord[];
  history: History;
  deviceTypes: ReadonlyMap<string, string | null>;
  /** Review panel codes by the committee name the records carry (build/sources/lookups.ts). */
  panelCodes: ReadonlyMap<string, string>;
  generatedAt: string;
};

/** The best `limit` items seen so far by a comparison, kept sorted. */
class Newest {
  readonly items: FeedRecord[] = [];
  constructor(private readonly limit: number) {}
  /** Whether a record first seen at `firstSeenAt` and decided on `decisionDate` could enter: a check before building it. */
  wants(firstSeenAt: string, decisionDate: string | null): boolean {
    const last = this.items[this.limit - 1];
    if (!last) return true;
    if (last.firstSeenAt !== firstSeenAt) return firstSeenAt > last.firstSeenAt;
    return (decisionDate ?? '') >= (last.decisionDate ?? '');
  }

  offer(r: FeedRecord): void {
    const items = this.items;
    if (items.length >= this.limit && compareNewest(r, items[items.length - 1]!) >= 0) return;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareNewest(items[mid]!, r) <= 0) lo = mid + 1;
      else hi = mid;
    }
    items.splice(lo, 0, r);
    if (items.length > this.limit) items.pop();
  }
}

/** A panel's file name: its two-letter code, or for a name the lookups do not know, its letters and digits. */
export function panelFileCode(name: string, codes: ReadonlyMap<string, string>): string {
  return codes.get(name) ?? (name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unnamed');
}

export function writeStaticFeeds(input: StaticFeedsInput, writer: SnapshotWriter): { files: number } {
  const { records, history, deviceTypes, panelCodes, generatedAt } = input;
  const baselineAt = history.index.baselineAt;
  const all = new Newest(STATIC_FEED_LIMIT);
  const panels = new Map<string, { name: string; newest: Newest }>();
  const codeOf = new Map<string, string>();
  for (const r of records) {
    const firstSeenAt = history.firstSeen.get(r.kNumber) ?? baselineAt;
    let code: string | null = null;
    if (r.advisoryCommittee) {
      code = codeOf.get(r.advisoryCommittee) ?? panelFileCode(r.advisoryCommittee, panelCodes);
      codeOf.set(r.advisoryCommittee, code);
    }
    let panel = code === null ? undefined : panels.get(code);
    if (code !== null && !panel) panels.set(code, (panel = { name: r.advisoryCommittee as string, newest: new Newest(STATIC_FEED_LIMIT) }));
    const inAll = all.wants(firstSeenAt, r.decisionDate);
    const inPanel = panel !== undefined && panel.newest.wants(firstSeenAt, r.decisionDate);
    if (!inAll && !inPanel) continue;
    const item: FeedRecord = {
      kNumber: r.kNumber,
      deviceName: r.deviceName,
      applicant: r.applicant,
      productCode: r.productCode,
      deviceType: r.productCode ? (deviceTypes.get(r.productCode) ?? null) : null,
      advisoryCommittee: r.advisoryCommittee,
      decisionDate: r.decisionDate,
      decisionDescription: r.decisionDescription,
      reviewDays: r.reviewDays,
      firstSeenAt,
      updatedAt: history.lastChanged.get(r.kNumber) ?? firstSeenAt,
    };
    if (inAll) all.offer(item);
    if (inPanel) panel!.newest.offer(item);
  }

  const removed: FeedRecord[] = [];
  for (let s = history.sets.length - 1; s >= 0 && removed.length < STATIC_FEED_LIMIT; s--) {
    const set = history.sets[s]!;
    for (const c of set.changes) {
      if (c.kind !== 'removed' || !c.was || removed.length >= STATIC_FEED_LIMIT) continue;
      const type = c.was.productCode ? (deviceTypes.get(c.was.productCode) ?? null) : null;
      removed.push({ kNumber: c.kNumber, ...c.was, deviceType: type, reviewDays: null, firstSeenAt: set.at, updatedAt: set.at });
    }
  }

  const encoder = new TextEncoder();
  const top = (self: string): Omit<Feed, 'kind' | 'title' | 'records'> => ({ selfUrl: self, pageUrl: '../../', recordUrlPrefix: '../../#record=', updated: generatedAt });
  writer.writeBytes('feeds/new.atom', encoder.encode(atomFeed({ ...top('new.atom'), kind: 'new', title: '510(k) clearances: newest in the data', records: all.items })));
  writer.writeBytes('feeds/new.json', encoder.encode(jsonFeed({ ...top('new.json'), kind: 'new', title: '510(k) clearances: newest in the data', records: all.items })));
  writer.writeBytes('feeds/removed.atom', encoder.encode(atomFeed({ ...top('removed.atom'), kind: 'removed', title: 'Removed 510(k) records', records: removed })));
  for (const [code, panel] of [...panels].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const feed: Feed = {
      kind: 'new',
      title: `510(k) clearances: ${panel.name} panel`,
      selfUrl: `${code}.atom`,
      pageUrl: '../../../',
      recordUrlPrefix: '../../../#record=',
      updated: generatedAt,
      records: panel.newest.items,
    };
    writer.writeBytes(`feeds/panel/${code}.atom`, encoder.encode(atomFeed(feed)));
  }
  return { files: 3 + panels.size };
}
