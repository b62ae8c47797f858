/**
 * Feeds of clearances as Atom 1.0 (RFC 4287) and JSON Feed 1.1, from plain values: the server's GET /v1/feed and
 * the build's static feeds (feeds/ in the snapshot) write them the same way. Node-free: it runs in the Worker too.
 */

export const FDA_RECORD_URL = 'https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=';

/** A clearance as a feed entry sees it: the record's members the entry shows, and its dates in the data. */
export type FeedRecord = {
  kNumber: string;
  deviceName: string;
  applicant: string | null;
  productCode: string | null;
  /** The product code's device type, when the classification names one. */
  deviceType: string | null;
  advisoryCommittee: string | null;
  decisionDate: string | null;
  decisionDescription: string | null;
  reviewDays: number | null;
  /** When the record first appeared in the data (history/records.json). */
  firstSeenAt: string;
  /** When it last changed, else when it was first seen; for a removal, when it was removed. */
  updatedAt: string;
};

export type FeedKind = 'new' | 'removed';

export type Feed = {
  kind: FeedKind;
  /** What the feed watches, for its title: "DQY · Catheter, Percutaneous". */
  title: string;
  /** The feed's own address (absolute when the host is known, else relative to the feed's file). */
  selfUrl: string;
  /** The page that shows the same search. */
  pageUrl: string;
  /** Where a record's view in the page is: the K number is appended. */
  recordUrlPrefix: string;
  /** The snapshot's generation time. */
  updated: string;
  records: readonly FeedRecord[];
};

/** The same K number always has the same id; a removal is an entry of its own. */
export function entryId(kNumber: string, kind: FeedKind): string {
  return kind === 'removed' ? `tag:device-510k,2026:clearance/${kNumber}/removed` : `tag:device-510k,2026:clearance/${kNumber}`;
}

/** The feed's id: what it watches, never where it is served from. */
function feedId(feed: Feed): string {
  return `tag:device-510k,2026:feed/${feed.kind}/${encodeURIComponent(feed.title)}`;
}

export function entryTitle(r: FeedRecord): string {
  return r.applicant ? `${r.deviceName} — ${r.applicant}` : r.deviceName;
}

/** A short description in plain words: the decision, the product code and its device type, the panel, the review time. */
export function entrySummary(r: FeedRecord, kind: FeedKind): string {
  const parts: string[] = [];
  if (kind === 'removed') parts.push(`${r.kNumber} is no longer in FDA's 510(k) data.`);
  const decision = r.decisionDescription ?? 'Decision not stated';
  parts.push(r.decisionDate ? `${decision} on ${r.decisionDate}.` : `${decision}.`);
  if (r.productCode) parts.push(`Product code ${r.productCode}${r.deviceType ? ` (${r.deviceType})` : ''}.`);
  if (r.advisoryCommittee) parts.push(`Review panel: ${r.advisoryCommittee}.`);
  if (r.reviewDays !== null) parts.push(`Reviewed in ${r.reviewDays} day${r.reviewDays === 1 ? '' : 's'}.`);
  return parts.join(' ');
}

/** A decision date as an RFC 3339 time (the start of that day, UTC). */
function dayTime(date: string | null): string | null {
  return date === null ? null : `${date}T00:00:00Z`;
}

/** RFC 3339 without milliseconds. */
function rfc3339(time: string): string {
  return `${time.slice(0, 19)}Z`;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** Escaped for XML text and attributes; characters XML 1.0 cannot carry at all are dropped. */
export function xmlText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c] as string);
}

export function atomFeed(feed: Feed): string {
  const out: string[] = [];
  out.push('<?xml version="1.0" encoding="utf-8"?>');
  out.push('<feed xmlns="http://www.w3.org/2005/Atom">');
  out.push(`  <id>${xmlText(feedId(feed))}</id>`);
  out.push(`  <title>${xmlText(feed.title)}</title>`);
  out.push(`  <updated>${rfc3339(feed.updated)}</updated>`);
  out.push(`  <link rel="self" type="application/atom+xml" href="${xmlText(feed.selfUrl)}"/>`);
  out.push(`  <link rel="alternate" type="text/html" href="${xmlText(feed.pageUrl)}"/>`);
  out.push('  <author><name>device-510k (data: U.S. FDA 510(k) premarket notifications)</name></author>');
  out.push('  <generator>device-510k</generator>');
  for (const r of feed.records) {
    const published = dayTime(r.decisionDate);
    out.push('  <entry>');
    out.push(`    <id>${xmlText(entryId(r.kNumber, feed.kind))}</id>`);
    out.push(`    <title>${xmlText(entryTitle(r))}</title>`);
    out.push(`    <updated>${rfc3339(r.updatedAt)}</updated>`);
    if (published) out.push(`    <published>${published}</published>`);
    out.push(`    <link rel="alternate" type="text/html" href="${xmlText(feed.recordUrlPrefix + r.kNumber)}"/>`);
    out.push(`    <link rel="related" type="text/html" title="FDA's record" href="${xmlText(FDA_RECORD_URL + r.kNumber)}"/>`);
    if (r.productCode) out.push(`    <category term="${xmlText(r.productCode)}" label="${xmlText(r.deviceType ?? r.productCode)}"/>`);
    out.push(`    <summary type="text">${xmlText(entrySummary(r, feed.kind))}</summary>`);
    out.push('  </entry>');
  }
  out.push('</feed>');
  return `${out.join('\n')}\n`;
}

export function jsonFeed(feed: Feed): string {
  const value = {
    version: 'https://jsonfeed.org/version/1.1',
    title: feed.title,
    home_page_url: feed.pageUrl,
    feed_url: feed.selfUrl,
    authors: [{ name: 'device-510k (data: U.S. FDA 510(k) premarket notifications)' }],
    items: feed.records.map((r) => {
      const published = dayTime(r.decisionDate);
      return {
        id: entryId(r.kNumber, feed.kind),
        url: feed.recordUrlPrefix + r.kNumber,
        external_url: FDA_RECORD_URL + r.kNumber,
        title: entryTitle(r),
        content_text: entrySummary(r, feed.kind),
        summary: entrySummary(r, feed.kind),
        ...(published && { date_published: published }),
        date_modified: rfc3339(r.updatedAt),
        ...(r.productCode && { tags: [r.productCode] }),
        _device_510k: { kNumber: r.kNumber, firstSeenAt: rfc3339(r.firstSeenAt), kind: feed.kind },
      };
    }),
  };
  return `${JSON.stringify(value, null, 1)}\n`;
}

/** Newest first: by first appearance in the data, then decision date (newest, undated last), then K number. */
export function compareNewest(a: FeedRecord, b: FeedRecord): number {
  if (a.firstSeenAt !== b.firstSeenAt) return a.firstSeenAt > b.firstSeenAt ? -1 : 1;
  const da = a.decisionDate ?? '';
  const db = b.decisionDate ?? '';
  if (da !== db) return da > db ? -1 : 1;
  return a.kNumber > b.kNumber ? -1 : a.kNumber < b.kNumber ? 1 : 0;
}
