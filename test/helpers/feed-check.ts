/**
 * Checks of feeds against their specifications, apart from the code that writes them: Atom 1.0 by RFC 4287's rules
 * over a parsed XML tree, JSON Feed by version 1.1's required members and types. Each returns the problems found
 * (an empty list: valid) so a test shows them all at once.
 *
 * The XML parser is the one import below: a strict, small well-formedness parser of our own until an XML library
 * is a dev dependency (fast-xml-parser's XMLValidator and XMLParser take its place line for line).
 */
import { parseXml, type XmlElement } from './xml.ts';

const ATOM_NS = 'http://www.w3.org/2005/Atom';
/** RFC 3339 date-time (RFC 4287 section 3.3: an uppercase T and Z, a full time, an optional fraction). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** An IRI: a scheme, then anything (RFC 3987's absolute form, loosely). */
const IRI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

export type AtomEntry = { id: string; title: string; updated: string; published: string | null; links: { rel: string; href: string }[]; summary: string | null };
export type AtomFeed = { id: string; title: string; updated: string; links: { rel: string; href: string }[]; entries: AtomEntry[] };

const kids = (e: XmlElement, name: string) => e.children.filter((c) => c.name === name);
const text = (e: XmlElement | undefined) => e?.text ?? '';

/** Parses an Atom document and checks it against RFC 4287; throws on XML that is not well formed. */
export function checkAtom(xml: string): { feed: AtomFeed; problems: string[] } {
  const root = parseXml(xml);
  const problems: string[] = [];
  const need = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  need(root.name === 'feed', `the root element is ${root.name}, not feed`);
  need(root.attributes.xmlns === ATOM_NS, 'the feed is not in the Atom namespace');
  const one = (e: XmlElement, name: string, where: string) => {
    const found = kids(e, name);
    need(found.length === 1, `${where} has ${found.length} atom:${name}, must have exactly one`);
    return found[0];
  };
  const date = (e: XmlElement | undefined, where: string) => {
    if (e) need(RFC3339.test(text(e)), `${where} "${text(e)}" is not an RFC 3339 date-time`);
  };
  const linksOf = (e: XmlElement, where: string) => {
    const links = kids(e, 'link').map((l) => ({ rel: l.attributes.rel ?? 'alternate', href: l.attributes.href ?? '', type: l.attributes.type ?? '', hreflang: l.attributes.hreflang ?? '' }));
    for (const l of links) need(l.href !== '', `${where} has a link without href`);
    const alternates = links.filter((l) => l.rel === 'alternate').map((l) => `${l.type}|${l.hreflang}`);
    need(new Set(alternates).size === alternates.length, `${where} has more than one alternate link of one type and language`);
    return links.map(({ rel, href }) => ({ rel, href }));
  };
  const feedId = one(root, 'id', 'the feed');
  need(IRI.test(text(feedId)), 'the feed id is not an IRI');
  const feedTitle = one(root, 'title', 'the feed');
  const feedUpdated = one(root, 'updated', 'the feed');
  date(feedUpdated, 'the feed updated');
  const feedLinks = linksOf(root, 'the feed');
  need(feedLinks.filter((l) => l.rel === 'self').length === 1, 'the feed should have one self link');
  const entries: AtomEntry[] = [];
  const ids = new Set<string>();
  const feedAuthor = kids(root, 'author').length > 0;
  for (const [i, e] of kids(root, 'entry').entries()) {
    const where = `entry ${i + 1}`;
    const id = one(e, 'id', where);
    need(IRI.test(text(id)), `${where} id is not an IRI`);
    need(!ids.has(text(id)), `${where} repeats the id ${text(id)}`);
    ids.add(text(id));
    const title = one(e, 'title', where);
    const updated = one(e, 'updated', where);
    date(updated, `${where} updated`);
    const published = kids(e, 'published');
    need(published.length <= 1, `${where} has more than one published`);
    date(published[0], `${where} published`);
    need(feedAuthor || kids(e, 'author').length > 0, `${where} has no author and the feed has none`);
    const links = linksOf(e, where);
    const content = kids(e, 'content');
    need(content.length > 0 || links.some((l) => l.rel === 'alternate'), `${where} has neither content nor an alternate link`);
    const summary = kids(e, 'summary');
    need(summary.length <= 1, `${where} has more than one summary`);
    entries.push({ id: text(id), title: text(title), updated: text(updated), published: published[0] ? text(published[0]) : null, links, summary: summary[0] ? text(summary[0]) : null });
  }
  return { feed: { id: text(feedId), title: text(feedTitle), updated: text(feedUpdated), links: feedLinks, entries }, problems };
}

/** Checks a parsed JSON Feed against version 1.1's required members and the types of those it uses. */
export function checkJsonFeed(value: unknown): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  const feed = value as Record<string, unknown>;
  need(typeof value === 'object' && value !== null, 'the feed is not an object');
  need(feed.version === 'https://jsonfeed.org/version/1.1', 'version is not https://jsonfeed.org/version/1.1');
  need(typeof feed.title === 'string' && feed.title !== '', 'title is required');
  for (const k of ['home_page_url', 'feed_url', 'description', 'next_url', 'icon', 'favicon', 'language']) {
    need(feed[k] === undefined || typeof feed[k] === 'string', `${k} must be a string`);
  }
  need(Array.isArray(feed.items), 'items is required and must be an array');
  const ids = new Set<string>();
  for (const [i, raw] of ((feed.items as unknown[]) ?? []).entries()) {
    const item = raw as Record<string, unknown>;
    const where = `item ${i + 1}`;
    need(typeof item.id === 'string' && item.id !== '', `${where} id is required and must be a non-empty string`);
    need(!ids.has(item.id as string), `${where} repeats the id ${String(item.id)}`);
    ids.add(item.id as string);
    need(typeof item.content_text === 'string' || typeof item.content_html === 'string', `${where} must have content_text or content_html`);
    for (const k of ['url', 'external_url', 'title', 'summary', 'image', 'banner_image']) need(item[k] === undefined || typeof item[k] === 'string', `${where} ${k} must be a string`);
    for (const k of ['date_published', 'date_modified']) need(item[k] === undefined || RFC3339.test(item[k] as string), `${where} ${k} must be RFC 3339`);
    need(item.tags === undefined || (Array.isArray(item.tags) && item.tags.every((t) => typeof t === 'string')), `${where} tags must be strings`);
    for (const k of Object.keys(item)) {
      const known = ['id', 'url', 'external_url', 'title', 'content_html', 'content_text', 'summary', 'image', 'banner_image', 'date_published', 'date_modified', 'authors', 'author', 'tags', 'language', 'attachments'];
      need(known.includes(k) || k.startsWith('_'), `${where} has ${k}, which is neither a member of JSON Feed 1.1 nor an extension (_name)`);
    }
  }
  return problems;
}
