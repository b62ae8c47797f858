/**
 * The requested page of matches in answer order: score descending, then document id ascending (ids are already in
 * tie order: decision date descending, null last, then K number descending). Without scores the matches are in answer
 * order as they are. Only the score buckets that overlap the page are read, so no full sort happens.
 */
export function pageOf(docs: Uint32Array, scores: Uint32Array | null, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  if (scores === null) return docs.slice(offset, offset + limit);

  let max = 0;
  for (let i = 0; i < scores.length; i++) if (scores[i]! > max) max = scores[i]!;
  const histogram = new Uint32Array(max + 1);
  for (let i = 0; i < scores.length; i++) histogram[scores[i]!]!++;

  // For each score from the top, how many of its documents to skip and to take.
  const skip = new Map<number, number>();
  const take = new Map<number, number>();
  let before = 0;
  let wanted = Math.min(limit, docs.length - offset);
  for (let s = max; s >= 0 && wanted > 0; s--) {
    const count = histogram[s]!;
    if (count === 0) continue;
    if (before + count > offset) {
      const from = Math.max(0, offset - before);
      const n = Math.min(count - from, wanted);
      skip.set(s, from);
      take.set(s, n);
      wanted -= n;
    }
    before += count;
  }

  const picked = new Map<number, number[]>();
  for (const s of take.keys()) picked.set(s, []);
  for (let i = 0; i < docs.length; i++) {
    const s = scores[i]!;
    const list = picked.get(s);
    if (list === undefined) continue;
    const toSkip = skip.get(s)!;
    if (toSkip > 0) skip.set(s, toSkip - 1);
    else if (list.length < take.get(s)!) list.push(docs[i]!);
  }
  const out: number[] = [];
  for (const s of [...take.keys()].sort((a, b) => b - a)) out.push(...picked.get(s)!);
  return Uint32Array.from(out);
}
