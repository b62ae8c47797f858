import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An independent model of lineage for tests: the edge CSV files read as text (no code of the build or the snapshot),
 * the rule between sources applied here, and a plain breadth-first walk over strings.
 */
export type ModelEdge = { to: string; kind: 'predicate' | 'named'; source: string };
export type ModelItem = { kNumber: string; depth: number; via: string; kind: string; source: string };
export type ModelAnswer = { items: ModelItem[]; cycles: { kNumber: string; via: string; kind: string; source: string }[] };
export type Model = {
  forward: Map<string, ModelEdge[]>;
  reverse: Map<string, ModelEdge[]>;
  /** Every number with an edge either way. */
  devices: Set<string>;
};

/** Reads every folder of `root` that holds a source.json (not below: the fixtures are one level deep). */
export function readModel(root: string): Model {
  const sources: { source: string; kind: 'predicate' | 'named'; rows: [string, string][]; read: Set<string> }[] = [];
  for (const name of readdirSync(root).sort()) {
    const dir = join(root, name);
    if (!existsSync(join(dir, 'source.json'))) continue;
    const meta = JSON.parse(readFileSync(join(dir, 'source.json'), 'utf8')) as { source: string; kind: 'predicate' | 'named'; report?: string };
    const lines = readFileSync(join(dir, 'predicates.csv'), 'utf8').split(/\r?\n/).slice(1).filter(Boolean);
    const rows = lines.map((l) => l.split(',').map((s) => s.trim().toUpperCase()) as [string, string]);
    const read = new Set<string>();
    if (meta.report) {
      for (const line of readFileSync(join(dir, meta.report), 'utf8').split(/\r?\n/).slice(1).filter(Boolean)) {
        const [device, status] = line.split(',');
        if (status === 'read') read.add((device as string).toUpperCase());
      }
    }
    sources.push({ source: meta.source, kind: meta.kind, rows, read });
  }
  const readByText = new Set(sources.filter((s) => s.kind === 'predicate').flatMap((s) => [...s.read]));
  const forward = new Map<string, ModelEdge[]>();
  const reverse = new Map<string, ModelEdge[]>();
  const devices = new Set<string>();
  const seen = new Set<string>();
  for (const s of sources) {
    for (const [device, predicate] of s.rows) {
      if (s.kind === 'named' && readByText.has(device)) continue;
      const key = `${device} ${predicate} ${s.source}`;
      if (seen.has(key)) continue;
      seen.add(key);
      devices.add(device).add(predicate);
      if (!forward.has(device)) forward.set(device, []);
      if (!reverse.has(predicate)) reverse.set(predicate, []);
      forward.get(device)!.push({ to: predicate, kind: s.kind, source: s.source });
      reverse.get(predicate)!.push({ to: device, kind: s.kind, source: s.source });
    }
  }
  return { forward, reverse, devices };
}

/** The stronger of two origins of the same pair: a predicate source before a named one, then by source id. */
const rank = (e: ModelEdge) => `${e.kind === 'predicate' ? 0 : 1} ${e.source}`;

/** Breadth first, each level in ascending order of the numbers' text, `via` the smallest number of the level before. */
export function modelWalk(model: Model, id: string, direction: 'predicates' | 'descendants', depth: number | null, kinds: string[] | null): ModelAnswer {
  const adj = direction === 'predicates' ? model.forward : model.reverse;
  /** The followed edges of a number: one per neighbour, its strongest followed origin. */
  const followed = (from: string): ModelEdge[] => {
    const best = new Map<string, ModelEdge>();
    for (const e of adj.get(from) ?? []) {
      if (kinds !== null && !kinds.includes(e.kind)) continue;
      const prior = best.get(e.to);
      if (!prior || rank(e) < rank(prior)) best.set(e.to, e);
    }
    return [...best.values()];
  };
  const depthOf = new Map<string, number>([[id, 0]]);
  const items: ModelItem[] = [];
  const walked: { from: string; e: ModelEdge }[] = [];
  let level = [id];
  let d = 0;
  while (level.length > 0 && (depth === null || d < depth)) {
    d++;
    const found = new Map<string, ModelItem>();
    for (const from of [...level].sort()) {
      for (const e of followed(from)) {
        walked.push({ from, e });
        if (depthOf.has(e.to) || found.has(e.to)) continue;
        found.set(e.to, { kNumber: e.to, depth: d, via: from, kind: e.kind, source: e.source });
      }
    }
    const next = [...found.keys()].sort();
    for (const k of next) {
      depthOf.set(k, d);
      items.push(found.get(k)!);
    }
    level = next;
  }
  const tree = new Set(items.map((i) => `${i.via} ${i.kNumber}`));
  const out = new Map<string, string[]>();
  for (const { from, e } of walked) {
    if (!out.has(from)) out.set(from, []);
    out.get(from)!.push(e.to);
  }
  const reaches = (a: string, b: string): boolean => {
    const seen = new Set([a]);
    const queue = [a];
    while (queue.length) {
      const x = queue.shift()!;
      if (x === b) return true;
      for (const y of out.get(x) ?? []) if (!seen.has(y)) (seen.add(y), queue.push(y));
    }
    return false;
  };
  const cycles = walked
    .filter(({ from, e }) => !tree.has(`${from} ${e.to}`) && reaches(e.to, from))
    .map(({ from, e }) => ({ kNumber: e.to, via: from, kind: e.kind, source: e.source }))
    .sort((a, b) => (a.via < b.via ? -1 : a.via > b.via ? 1 : a.kNumber < b.kNumber ? -1 : a.kNumber > b.kNumber ? 1 : 0));
  return { items, cycles };
}
