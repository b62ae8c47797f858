import { findNumbers, type NumberHit } from './numbers.ts';
import { plainText } from './text.ts';

/**
 * Which of the numbers a 510(k) summary mentions are its predicates, from the language around each mention: the
 * sentence it stands in, the heading of its section, the header of the comparison table it sits under. A pure
 * function over text; the same rules read a PDF's text layer and an OCR'd copy (see plainText).
 */
export type Predicate = { id: string; reason: string };
export type Extraction = {
  predicates: Predicate[];
  /** Every number the text mentions, the device's own excluded, in order of first mention. */
  mentioned: string[];
  /** Why no predicate was found; null when some was. */
  none: string | null;
};

/** Words that make a sentence, heading or table header speak of the predicate. */
const PREDICATE_CUE =
  /predicate|substantial(?:ly)?\s*equivalen|equivalen(?:t|ce|cy)\s+(?:to|with|in)|claim(?:s|ed)?\s+(?:substantial\s+)?equivalen|legally\s+marketed|equivalent\s+device|comparison\s+device|similar\s+(?:legally\s+)?(?:marketed\s+)?device/gi;
/**
 * Words that, between a cue and a number, make the number something other than the predicate: a reference device or
 * method, an earlier clearance of a part, an instrument or kit it runs on or is used with.
 */
const OTHER_CUE =
  /ancillary|accessor(?:y|ies)|reference\s+(?:device|method|assay|instrument|analy[sz]er|system)|\bnot\s+(?:a\s+|the\s+)?predicate|(?:run|used|use|run\s+on|performed|tested)\s+(?:on|with)\b|for\s+use\s+(?:on|with)|in\s+conjunction\s+with|\(\s*ref[:.]/gi;
/**
 * Words that make a number an earlier clearance (of the device, a part, a calibrator) unless its sentence or section
 * speaks of the predicate: a modified device's predicate is often its own previous version.
 */
const EARLIER_CUE = /previously\s+(?:fda\s+)?cleared|cleared\s+(?:under|in|with|by|via|as\s+part)|(?:was|were|been|is|are)\s+(?:fda\s+)?cleared|clearance|modification\s+of/gi;
/** A cue that announces several predicates: "Predicate Devices", "predicates", "the following devices". */
const PLURAL = /^(?:predicates\b|predicate\s*(?:\w+\s*)?(?:devices|assays|systems|tests|kits|products|methods|510\s*\(k\)s)|predicate\s*(?:device\s*)?\(s\)|[^.:]{0,60}(?:following|these|both)\b|[^.:]{0,40}\b(?:devices|assays|products)\b)/i;

/** Words of a statement, from its start to just past a number, that speak of several devices. */
const MANY = /\b(?:predicates|devices|assays|calibrators|systems|tests|kits|products|reagents|510\s*\(k\)s)\b|predicate\s*\(s\)|device\s*\(s\)|predicate\s*[12]\b|primary|secondary/i;

/** Section headings: short lines that open with a numbering or a known heading word, or end with a colon. */
const HEADING_START =
  /^(?:(?:[0-9]{1,2}(?:\.[0-9]{1,2})*|[A-Za-z]|[IVX]{1,5})[.)]\s|[A-Z][.)](?=[A-Z][a-z])|807\.92|(?:predicate|device|proposed|subject|new|intended|indications?|description|comparison|substantial|technolog|performance|conclusion|applicant|submitter|contact|classification|regulat|proprietary|trade|common|date|summary|reference|similarities|differences|analytical|clinical|manufacturer|establishment|product|identification|legally)\b)/i;

/**
 * A heading that opens a section of its own: numbered or lettered (`3.`, `C.`, `(6)`, `IV)`) or in capitals. Other
 * heading-like lines (`Manufacturer TaiDoc`, `Regulations: ABL90`, `Device Trade Name:`) may be a section's fields.
 */
const NUMBERED = /^(?:\(?(?:[0-9]{1,2}(?:\.[0-9]{1,2})*|[A-Za-z]|[IVX]{1,5})[.)]\s|[A-Z][.)](?=[A-Z][a-z]))/;

type Heading = { start: number; text: string; predicate: boolean; numbered: boolean };

function headingsOf(text: string): Heading[] {
  const out: Heading[] = [];
  let at = 0;
  for (const line of text.split('\n')) {
    const t = line.trim();
    const caps = /^[^a-z]{6,}$/.test(t) && /[A-Z]{4}/.test(t);
    if (t.length > 0 && t.length <= 90 && (HEADING_START.test(t) || caps) && !/[.;]\s*$/.test(t.replace(/\b(?:No|Nos|Inc|Co|Ltd)\.$/i, ''))) {
      // A heading line with a number on it is data (`Predicate 510(k) No: K123456`), read by the sentence rule.
      PREDICATE_CUE.lastIndex = 0;
      out.push({ start: at, text: t, predicate: PREDICATE_CUE.test(t) && !/^(?:table|figure)\b/i.test(t), numbered: caps || NUMBERED.test(t) });
    }
    at += line.length + 1;
  }
  return out;
}

/** Abbreviations whose period ends no sentence. */
const ABBREV = /\b(?:inc|ltd|co|corp|no|nos|e\.g|i\.e|vs|approx|dr|mr|ms|mrs|jr|st|ref|fig|cat|model|ver|rev|u\.s|l\.l\.c)\.$/i;

/** Where the sentence holding `pos` starts: after the last period, question mark or semicolon that ends one. */
function sentenceStart(text: string, pos: number, limit: number): number {
  const from = Math.max(0, pos - limit);
  for (let i = pos - 1; i >= from; i--) {
    const c = text[i];
    if ((c === '.' || c === '?' || c === '!' || c === ';') && /\s/.test(text[i + 1] ?? '')) {
      if (c === '.' && (ABBREV.test(text.slice(Math.max(0, i - 6), i + 1)) || /\d/.test(text[i - 1] ?? ''))) continue;
      return i + 1;
    }
  }
  return from;
}

function sentenceEnd(text: string, pos: number, limit: number): number {
  const to = Math.min(text.length, pos + limit);
  for (let i = pos; i < to; i++) {
    const c = text[i];
    if ((c === '.' || c === '?' || c === '!' || c === ';') && /\s/.test(text[i + 1] ?? '')) {
      if (c === '.' && ABBREV.test(text.slice(Math.max(0, i - 6), i + 1))) continue;
      return i;
    }
  }
  return to;
}

function lastMatch(re: RegExp, s: string): { index: number; text: string } | null {
  re.lastIndex = 0;
  let last: { index: number; text: string } | null = null;
  for (const m of s.matchAll(re)) last = { index: m.index, text: m[0] };
  return last;
}

function firstMatch(re: RegExp, s: string): { index: number; text: string } | null {
  re.lastIndex = 0;
  const m = re.exec(s);
  re.lastIndex = 0;
  return m ? { index: m.index, text: m[0] } : null;
}

const quote = (s: string) => JSON.stringify(s.replace(/\s+/g, ' ').trim().toLowerCase());

/** The FDA's own pages (clearance letter, indications-for-use form) that name the device's own number. */
const OWN_NUMBER_CUE =
  /(?:\bre:\s*|\(\s*i?f\s*kn?own\s*\)?\s*:?\s*|assigned\s*510\s*\(?k\)?\s*number\s*is\s*:?\s*|^510\s*\(?k\)?\s*(?:number|no\.?)\s*:?\s*)$/im;

type Role = { kind: 'predicate'; reason: string; at: number; from: number } | { kind: 'other'; reason: string } | { kind: 'plain' };

function roleOf(text: string, hit: NumberHit, headings: readonly Heading[]): Role {
  let heading: Heading | undefined;
  for (const h of headings) {
    if (h.start > hit.start) break;
    heading = h;
  }
  // A sentence never reaches back across a heading.
  const start = Math.max(sentenceStart(text, hit.start, 400), heading?.start ?? 0);
  const before = text.slice(start, hit.start);
  const after = text.slice(hit.end, sentenceEnd(text, hit.end, 160));
  const near = text.slice(Math.max(start, hit.start - 40), hit.start);
  // A bare `510(k) number:` line is the device's own on FDA's form, the predicate's among a predicate section's fields.
  const own = OWN_NUMBER_CUE.exec(near);
  const inPredicateSection = (heading?.predicate === true && hit.start - heading.start < 1200) || fieldSection(text, hit, headings) !== null;
  if (own && !/predicate/i.test(near) && !(/^510/.test(own[0]) && inPredicateSection)) return { kind: 'other', reason: 'the form names the device itself' };

  const cue = lastMatch(PREDICATE_CUE, before);
  const other = lastMatch(OTHER_CUE, before);
  // "The predicate device … is the X Method for Use on the Y System (K…)": what follows the verb is the predicate's
  // name, and a part it runs on named there is part of that name ("is run on the Y" names no predicate).
  const subject = other ? /\bthe\s+predicate\b[^;]*?\b(is|are|was|were)\s+(?:\S+\s+){2}/i.exec(before) : null;
  const named = subject !== null && other !== null && subject.index + subject[0].length <= other.index;
  if (cue && (!other || other.index < cue.index)) return { kind: 'predicate', reason: `sentence: ${quote(cue.text)}`, at: start + cue.index, from: start };
  if (subject && named) return { kind: 'predicate', reason: `sentence: "the predicate … ${subject[1]?.toLowerCase()}"`, at: start + subject.index, from: start };
  if (other) return { kind: 'other', reason: `sentence: ${quote(other.text)}` };
  const earlier = lastMatch(EARLIER_CUE, before);

  // A cue just after the number, before any other number: `K151809 (Predicate Device)`, `K972696 is the predicate`.
  const upToNext = after.split(/\b(?:K|DEN)\s?\d{5}/i)[0] ?? '';
  const afterCue = firstMatch(PREDICATE_CUE, upToNext.slice(0, 80));
  if (afterCue) return { kind: 'predicate', reason: `after: ${quote(afterCue.text)}`, at: hit.end + afterCue.index, from: start };

  // The line above a cell in a comparison table: its header names the predicate column.
  const lineStart = text.lastIndexOf('\n', hit.start - 1) + 1;
  const prevStart = text.lastIndexOf('\n', Math.max(0, lineStart - 2)) + 1;
  const lines = text.slice(prevStart, hit.start);
  const tableCue = lastMatch(PREDICATE_CUE, lines);
  if (tableCue && !lastMatch(OTHER_CUE, lines.slice(tableCue.index))) return { kind: 'predicate', reason: `header: ${quote(tableCue.text)}`, at: prevStart + tableCue.index, from: prevStart };

  // The section's heading.
  if (heading && heading.predicate && hit.start - heading.start < 1200) return { kind: 'predicate', reason: `section: ${quote(heading.text)}`, at: heading.start, from: heading.start };
  // The first number of a predicate section laid out as fields (`Predicate Device` / `Manufacturer …` / `510(k)
  // number K…`): field lines that look like headings do not end the section; a numbered heading does.
  const section = fieldSection(text, hit, headings);
  if (section) return { kind: 'predicate', reason: `section: ${quote(section.text)}`, at: section.start, from: section.start };
  if (earlier) return { kind: 'other', reason: `sentence: ${quote(earlier.text)}` };
  return { kind: 'plain' };
}

/** How far past a predicate heading its fields may run. */
const FIELDS_CHARS = 600;

function fieldSection(text: string, hit: NumberHit, headings: readonly Heading[]): Heading | null {
  let found: Heading | null = null;
  for (const h of headings) {
    if (h.start > hit.start) break;
    // A heading naming the predicate; one on equivalence opens a comparison of both devices.
    if (h.predicate && /predicate|legally\s+marketed/i.test(h.text)) found = h;
    else if (h.numbered) found = null;
  }
  if (!found || hit.start - found.start > FIELDS_CHARS) return null;
  const between = text.slice(found.start + found.text.length, hit.start);
  return findNumbers(between).length === 0 ? found : null;
}

/** The characters of a summary's opening that name what it covers (its title and trade name come first). */
const OPENING_CHARS = 600;
/** Predicate mentions further apart than this belong to different passages (see extractPredicates). */
const PASSAGE_GAP = 300;

/** A part that goes with an assay rather than being one: a calibrator, a control, an instrument it runs on. */
const PART = /calibrat|\bcontrols?\b|calcheck|calset|precicontrol|\bstandards?\b|verifier|diluent|analy[sz]er|instrument|integrated\s+system|\bmeter\b|collection\s*kit|transport/i;

/** The name a number is given: the words before it back to the previous number, cue or line start. */
function nameBefore(text: string, hit: NumberHit, previousEnd: number): string {
  const from = Math.max(previousEnd, text.lastIndexOf('\n', hit.start - 1) + 1, hit.start - 120);
  return text.slice(from, hit.start);
}

export function extractPredicates(raw: string, device: string | null): Extraction {
  const text = plainText(raw);
  // What the submission covers, as its opening (title and trade name) says.
  const opening = text.slice(0, OPENING_CHARS);
  const coversParts = PART.test(opening);
  // The device's own number is dropped first: beside its predicates in a table row, it is no part of their run.
  const hits = findNumbers(text).filter((h) => h.id !== device);
  const headings = headingsOf(text);
  const mentioned: string[] = [];
  const found = new Map<string, string>();
  const plain: string[] = [];
  const other = new Set<string>();
  let blockEnd = -1;
  const cueAts = new Set<number>();
  // A run of three or more numbers with nothing but commas and `and` between them is one device's history of
  // clearances (`Test (K080269, K052789, K051787, …)`): its first number stands for the predicate.
  const runFirst = new Map<NumberHit, boolean>();
  for (let i = 0; i < hits.length; ) {
    let j = i;
    while (j + 1 < hits.length && /^[\s,;&/]*(?:and|or)?[\s,;&/]*$/i.test(text.slice((hits[j] as NumberHit).end, (hits[j + 1] as NumberHit).start))) j++;
    for (let k = i; k <= j; k++) runFirst.set(hits[k] as NumberHit, k === i || j - i + 1 < 3);
    i = j + 1;
  }
  for (const hit of hits) {
    if (!mentioned.includes(hit.id)) mentioned.push(hit.id);
    const role = roleOf(text, hit, headings);
    if (role.kind === 'predicate') {
      // The summary states its predicates once, in one passage; numbers a later passage calls predicates are mostly
      // the predicate's own history, its parts or the devices of a comparison.
      if (blockEnd >= 0 && hit.start - blockEnd > PASSAGE_GAP) continue;
      blockEnd = hit.end;
      if (!runFirst.get(hit)) continue;
      // After the first predicate, a calibrator, control or instrument is a predicate only for a submission that
      // covers such parts itself.
      const prev = hits[hits.indexOf(hit) - 1];
      if (found.size > 0 && !coversParts && PART.test(nameBefore(text, hit, prev?.end ?? 0))) continue;
      // One statement that names several devices names one predicate, unless it speaks of several ("Predicate
      // Devices", "the following", "(predicate devices)", "Predicate 1 … Predicate 2") or gives two bare numbers
      // (`Predicate Device: K070660 and K021423`): the others are the predicate's parts, versions or companions.
      const idx = hits.indexOf(hit);
      const prevHit = hits[idx - 1];
      const pairWithPrev =
        prevHit !== undefined && found.has(prevHit.id) && /^[\s,;&/]*(?:and|or)?[\s,;&/]*$/i.test(text.slice(prevHit.end, hit.start));
      const bare = pairWithPrev && /^[\w\s()]{0,30}[:\-–]?\s*$/.test(text.slice(role.at, (prevHit as NumberHit).start));
      const several = PLURAL.test(text.slice(role.at, role.at + 60)) || MANY.test(text.slice(Math.min(role.from, role.at), hit.end + 30));
      if (found.size > 0 && cueAts.has(role.at) && !bare && !several) continue;
      cueAts.add(role.at);
      if (!found.has(hit.id)) found.set(hit.id, role.reason);
    } else if (role.kind === 'other') other.add(hit.id);
    else if (!plain.includes(hit.id)) plain.push(hit.id);
  }
  let predicates = [...found].map(([id, reason]) => ({ id, reason }));
  // PMA numbers are predicates only when a sentence says so: in a 510(k) they are mostly a comparator or a standard.
  predicates = predicates.filter((p) => !p.id.startsWith('P') || p.reason.startsWith('sentence'));
  if (predicates.length === 0) {
    const lone = plain.filter((id) => !other.has(id) && !id.startsWith('P'));
    if (lone.length === 1) predicates = [{ id: lone[0] as string, reason: 'the only other number the summary names' }];
  }
  const none =
    predicates.length > 0
      ? null
      : mentioned.length === 0
        ? 'the text names no K, DEN or P number besides the device'
        : `none of the ${mentioned.length} numbers named stands where a predicate is named`;
  return { predicates, mentioned, none };
}
