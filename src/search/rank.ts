/**
 * The requested page of matches in answer order: score descending, then document id ascending (ids are already in
 * tie order: decision date descending, null last, then K number descending). Without scores the matches are in answer
 * order as they are. Scores are small integers, so one counting pass finds which score buckets overlap the page and
 * a second pass picks their documents: no sort of all matches.
 */
export function pageOf(docs: Uint32Array, scores: Uint32Array | null, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  if (scores === null) return docs.slice(offset, offset + limit);

  const histogram = scoreHistogram(scores);
  const max = histogram.length - 1;

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

  // Stops once the page is full: on a first page, most often within its first few hundred matches.
  const out = new Uint32Array(size);
  let left = size;
  for (let i = 0; i < docs.length && left > 0; i++) {
    const s = scores[i]!;
    if (take[s] === 0) continue;
    if (skip[s]! > 0) skip[s]!--;
    else {
      out[at[s]!++] = docs[i]!;
      take[s]!--;
      left--;
    }
  }
  return out;
}

/** How many matches have each score, up to the highest (its length is the highest score + 1). */
function scoreHistogram(scores: Uint32Array): Uint32Array {
  // One pass when every score is below 64 (a query of up to six words): counted straight into a table that size.
  const small = new Uint32Array(64);
  let max = 0;
  let i = 0;
  for (; i < scores.length; i++) {
    const s = scores[i]!;
    if (s >= 64) break;
    small[s]!++;
    if (s > max) max = s;
  }
  if (i === scores.length) return small.subarray(0, max + 1);
  for (let j = i; j < scores.length; j++) if (scores[j]! > max) max = scores[j]!;
  const histogram = new Uint32Array(max + 1);
  for (let j = 0; j < scores.length; j++) histogram[scores[j]!]!++;
  return histogram;
}
