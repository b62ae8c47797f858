import { createRandom, randomIndex, type Random } from './random.ts';
import type { GeneratedFile } from './rows.ts';

/**
 * Predicate edges for generated records, in the shape real ones have: a device names devices of its own product
 * code cleared before it; most name one to three; a few of each large code's first devices are named by a share of
 * all later ones (thousands of times in the largest codes); many name a device cleared just before theirs; some are
 * the versions of a product line, each naming the version before it and nothing else, so that a line's last version
 * sits at the end of a chain as long as its line (20 to 40 versions, then the code starts a new line); and a few name
 * a later device, which closes cycles, as OCR errors and devices naming their own later versions do in real data.
 * A walk finds a device at its nearest distance, and the other picks make short cuts everywhere: the lines are what
 * keeps chains 20 and more steps deep.
 */
export type EdgeShape = {
  /** Share of devices that name no predicate. */
  none: number;
  /** Share of predicates that are one of the code's hubs, one of the code's recent devices, or a later device. */
  hub: number;
  recent: number;
  later: number;
  /** Hubs per product code (its first devices), named with weights 1, 1/2, 1/3, … */
  hubs: number;
  /** How far back, in the code's devices, a recent predicate is. */
  window: number;
  /** Share of devices that are the next version of their code's product line, and the lengths a line runs to. */
  line: number;
  lineLength: readonly [number, number];
};

export const EDGE_SHAPE: EdgeShape = { none: 0.1, hub: 0.2, recent: 0.4, later: 0.0005, hubs: 5, window: 40, line: 0.02, lineLength: [20, 40] };

/** How many predicates a device names: 1 (55 %), 2 (30 %) or 3 (15 %). */
function countOf(random: Random): number {
  const r = random();
  return r < 0.55 ? 1 : r < 0.85 ? 2 : 3;
}

function hubOf(random: Random, hubs: number): number {
  let total = 0;
  for (let i = 1; i <= hubs; i++) total += 1 / i;
  let target = random() * total;
  for (let i = 1; i <= hubs; i++) {
    target -= 1 / i;
    if (target < 0) return i - 1;
  }
  return 0;
}

/** The edges as predicates.csv text (`device,predicate`), from the generated files' rows. */
export function generateEdges(files: readonly GeneratedFile[], header: string, seed: string, shape: EdgeShape = EDGE_SHAPE): { csv: string; edges: number } {
  const productCode = header.split('|').indexOf('PRODUCTCODE');
  if (productCode < 0) throw new Error('the pmn header has no PRODUCTCODE column');
  const byCode = new Map<string, string[]>();
  for (const file of files) {
    for (const line of file.text.split('\r\n').slice(1)) {
      if (line === '') continue;
      const cols = line.split('|');
      const code = cols[productCode] ?? '';
      let list = byCode.get(code);
      if (!list) byCode.set(code, (list = []));
      list.push(cols[0] as string);
    }
  }
  const random = createRandom(`${seed}/edges`);
  const out: string[] = ['device,predicate'];
  for (const code of [...byCode.keys()].sort()) {
    const devices = (byCode.get(code) as string[]).sort();
    /** The code's current product line: its last version, how many versions it has, and how many it will have. */
    let line = { last: -1, versions: 0, length: 0 };
    for (let i = 1; i < devices.length; i++) {
      if (random() < shape.line) {
        if (line.last >= 0 && line.versions < line.length) {
          out.push(`${devices[i]},${devices[line.last]}`);
          line = { ...line, last: i, versions: line.versions + 1 };
          continue;
        }
        // The first version of a new line names its predicates as any device does.
        const [shortest, longest] = shape.lineLength;
        line = { last: i, versions: 1, length: shortest + randomIndex(random, longest - shortest + 1) };
      } else if (random() < shape.none) continue;
      const named = new Set<number>();
      const n = countOf(random);
      for (let j = 0; j < n; j++) {
        const r = random();
        let target: number;
        if (r < shape.later && i + 1 < devices.length) target = i + 1 + randomIndex(random, Math.min(shape.window, devices.length - i - 1));
        else if (r < shape.later + shape.hub) target = Math.min(i - 1, hubOf(random, shape.hubs));
        else if (r < shape.later + shape.hub + shape.recent) target = i - 1 - randomIndex(random, Math.min(shape.window, i));
        else target = randomIndex(random, i);
        named.add(target);
      }
      for (const t of [...named].sort((a, b) => a - b)) out.push(`${devices[i]},${devices[t]}`);
    }
  }
  return { csv: `${out.join('\n')}\n`, edges: out.length - 1 };
}
