import type { SectionWords } from '../search/chunk-sections.ts';
import { tokenize } from '../search/tokenize.ts';
import { DEFAULT_FIELDS_510K } from './fields.ts';
import type { FieldRef, Node } from './lucene.ts';

/**
 * The words a request looks up in the index's word list, and whether it reads each document's whole word list (see
 * src/search/chunk-sections.ts): the words of every clause on device_name or applicant's words (a term without a field
 * is one on each), each as a prefix; the whole lists for a phrase, a whole name or `_exists_` on device_name, and for
 * `count=device_name`.
 */
export function wordsFor510k(tree: Node, count: FieldRef | null): SectionWords {
  const prefixes = new Set<string>();
  let forward = false;
  const leaf = (node: Exclude<Node, { type: 'and' | 'or' | 'not' | 'all' }>, name: string, exact: boolean) => {
    if (name !== 'device_name' && name !== 'applicant') return;
    if (node.type !== 'term' && node.type !== 'phrase') {
      if (name === 'device_name') forward = true;
      return;
    }
    if (name === 'applicant' && exact) return;
    const words = tokenize(node.value);
    for (const w of words) prefixes.add(w);
    if (name === 'device_name' && (exact || (words.length > 1 && !(node.type === 'term' && node.prefix)))) forward = true;
  };
  const walk = (node: Node): void => {
    switch (node.type) {
      case 'and':
      case 'or':
        node.children.forEach(walk);
        return;
      case 'not':
        walk(node.child);
        return;
      case 'all':
        return;
      default:
        if (node.field) leaf(node, node.field.name, node.field.exact);
        else for (const f of DEFAULT_FIELDS_510K) leaf(node, f, false);
    }
  };
  walk(tree);
  // A count of words reads each document's words, not their positions, then the words it shows (fields.ts).
  return { prefixes: [...prefixes], forward: forward || count?.name === 'device_name', positions: forward };
}
