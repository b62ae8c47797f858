import { findNumbers } from './numbers.ts';
import { plainText } from './text.ts';

/**
 * FDA's decision summary (a review memo FDA publishes for laboratory devices, `cdrh_docs/reviews/K….pdf`) states the
 * predicate in a field of its own: "Predicate 510(k) Number(s): K222779" (or "2. Predicate 510(k) number(s):", or
 * "Predicate device name (Predicate 510(k) number):" before the lines that list them). Where the field is there, it
 * is the authority: its numbers are the device's predicates, and the 510(k) summary's reading gives way.
 */
const FIELD = /predicate\s*(?:device\s*)?510\s*\(?\s*k\s*\)?\s*(?:number|no\.?)\s*(?:\(\s*s\s*\))?s?\s*\)?\s*:/i;
/** The field that follows it in FDA's template ("C. Comparison with Predicate(s):", "3. Comparison with predicate"). */
const NEXT_FIELD = /comparison\s+with\s+(?:the\s+)?predicate|substantial\s+equivalence\s+information|device\s+description/i;
/** Any next lettered or numbered field of the template (`D. Intended Use:`). */
const NEXT_LABEL = /\n\s*(?:[A-Z]|\d{1,2})[.)]?\s+[A-Z][a-z]+(?:\s+[a-z]+)*\s*:/;
/** How far past the field's label its numbers may stand. */
const FIELD_CHARS = 400;

/** The predicates a decision summary's field states, in order, the device's own number left out; null without the field. */
export function decisionPredicates(raw: string, device: string | null): string[] | null {
  const text = plainText(raw);
  const field = FIELD.exec(text);
  if (!field) return null;
  const from = field.index + field[0].length;
  let body = text.slice(from, from + FIELD_CHARS);
  for (const re of [NEXT_FIELD, NEXT_LABEL]) {
    const next = re.exec(body);
    if (next) body = body.slice(0, next.index);
  }
  const ids: string[] = [];
  for (const hit of findNumbers(body)) if (hit.id !== device && !ids.includes(hit.id)) ids.push(hit.id);
  return ids.length > 0 ? ids : null;
}
