/**
 * The requested page of matches in answer order: score descending, then document id ascending (ids are already in
 * tie order: decision date descending, null last, then K number descending). Without scores the matches are in answer
 * order as they are. Scores are small integers, so one counting pass finds which score buckets overlap the page and
 * a second pass picks their documents: no sort of all matches.
 */
export function pageOf(docs: Uint32Array, scores: Uint32Array | null, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  if (scores === null) return docs.slice(offset, offset + limit);

  let max = 0;
  for (let i = 0; i < scores.length; i++) if (scores[i]! > max) max = scores[i]!;
  const histogram = new Uint32Array(max + 1);
  for (let i = 0; i < scores.length; i++) histogram[scores[i]!]!++;

  // For each score that overlaps the page: how many of its documents to skip, how many to take, where they go.
  const skip = new Float64Array(max + 1);
  const take = new Float64Array(max + 1);
  const at = new Float64Array(max + 1);
  const size = Math.min(limit, docs.length - offset);
  let before = 0;
  let placed = 0;
  for (let s = max; s >= 0 && placed < size; s--) {
    const count = histogram[s]!;
    if (count === 0) continue;
    if (before + count > offset) {
      skip[s] = Math.max(0, offset - before);
      take[s] = Math.min(count - skip[s]!, size - placed);
      at[s] = placed;
      placed += take[s]!;
    }
    before += count;
  }

  const out = new Uint32Array(size);
  for (let i = 0; i < docs.length; i++) {
    const s = scores[i]!;
    if (take[s] === 0) continue;
    if (skip[s]! > 0) skip[s]!--;
    else {
      out[at[s]!++] = docs[i]!;
      take[s]!--;
    }
  }
  return out;
}
