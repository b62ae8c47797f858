import type { Generator, LoadRequest, LoadResult } from './load.ts';
import { runLoad } from './load.ts';
import type { LookupOperation, LookupTarget } from './lookups.ts';
import { median } from './stats.ts';

/**
 * Lookups side by side: for each operation a short warm-up on each side, then rounds that alternate between our
 * server and nginx, so that both see the machine in the same state; the median round is reported.
 */
export type SideFigures = {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerResponse: number;
  failures: number;
  rounds: LoadResult[];
};

export type LookupFigures = {
  name: string;
  operation: LookupOperation;
  nginxFile: string;
  distinctRequests: number;
  ours: SideFigures;
  nginx: SideFigures | null;
  /** A bare node:http server sending the precomputed bytes (meta only): the most Node itself can do here. */
  floor: SideFigures | null;
  /** Our throughput over nginx's. */
  ratio: number;
};

export type LoadSettings = { generator: Generator; connections: number; seconds: number; warmupSeconds: number; rounds: number; tmp: string };

export function summarizeRounds(rounds: LoadResult[]): SideFigures {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    bytesPerResponse: median(rounds.map((r) => r.bytesPerResponse)),
    failures: rounds.reduce((s, r) => s + r.failures, 0),
    rounds,
  };
}

/** Warm-up and rounds of one request list against one or two servers, alternating. */
export async function measureSides(
  sides: { url: string; requests: readonly LoadRequest[]; tag: string }[],
  s: LoadSettings,
): Promise<SideFigures[]> {
  const options = (tag: string, seconds: number) => ({ connections: s.connections, seconds, tmp: s.tmp, tag });
  for (const side of sides) await runLoad(s.generator, side.url, side.requests, options(side.tag, s.warmupSeconds));
  const rounds: LoadResult[][] = sides.map(() => []);
  for (let r = 0; r < s.rounds; r++) {
    const order = r % 2 === 0 ? sides.map((_, i) => i) : sides.map((_, i) => i).reverse();
    for (const i of order) rounds[i]!.push(await runLoad(s.generator, sides[i]!.url, sides[i]!.requests, options(sides[i]!.tag, s.seconds)));
  }
  return rounds.map(summarizeRounds);
}

export async function measureLookup(
  target: LookupTarget,
  urls: { ours: string; nginx: string | null; floor: string | null },
  s: LoadSettings,
): Promise<LookupFigures> {
  const sides = [{ name: 'ours', url: urls.ours, requests: target.ours }];
  if (urls.nginx) sides.push({ name: 'nginx', url: urls.nginx, requests: target.nginx });
  if (urls.floor) sides.push({ name: 'floor', url: urls.floor, requests: target.ours });
  const figures = await measureSides(sides.map((x) => ({ url: x.url, requests: x.requests, tag: `${x.name}-${target.name.replace(/\W+/g, '-')}` })), s);
  const of = (name: string) => figures[sides.findIndex((x) => x.name === name)] ?? null;
  const ours = of('ours')!;
  const nginx = of('nginx');
  return {
    name: target.name,
    operation: target.operation,
    nginxFile: target.file,
    distinctRequests: target.ours.length,
    ours,
    nginx,
    floor: of('floor'),
    ratio: nginx ? ours.rps / nginx.rps : Number.NaN,
  };
}
