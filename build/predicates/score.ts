/** Precision and recall of predicate pairs against an answer key, and the ceiling a text allows. */
export type Score = {
  devices: number;
  truePairs: number;
  foundPairs: number;
  correct: number;
  precision: number;
  recall: number;
  /** Share of the key's predicates whose number the text mentions at all: no extractor can find more. */
  ceiling: number;
};

export function scorePairs(
  found: ReadonlyMap<string, readonly string[]>,
  truth: ReadonlyMap<string, readonly string[]>,
  mentioned: ReadonlyMap<string, readonly string[]>,
): Score {
  let truePairs = 0;
  let foundPairs = 0;
  let correct = 0;
  let reachable = 0;
  for (const [device, key] of truth) {
    const mine = new Set(found.get(device) ?? []);
    const named = new Set(mentioned.get(device) ?? []);
    truePairs += key.length;
    foundPairs += mine.size;
    for (const p of key) {
      if (mine.has(p)) correct++;
      if (named.has(p)) reachable++;
    }
  }
  const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
  return {
    devices: truth.size,
    truePairs,
    foundPairs,
    correct,
    precision: ratio(correct, foundPairs),
    recall: ratio(correct, truePairs),
    ceiling: ratio(reachable, truePairs),
  };
}
