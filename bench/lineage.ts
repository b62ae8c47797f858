/**
 * Lineage at scale, on one snapshot, in this process (no HTTP): the whole descendant tree of the most-cited device
 * and the whole predicate chain of a deep one, each walked many times over warm lineage files, and the share of the
 * snapshot's bytes that its lineage files take.
 *
 *   npx tsx bench/lineage.ts --snapshot DIR [--rounds N] [--against DIR]
 *
 * With --against, the walk of another checkout of the project (the code a change replaces) runs beside this one's over
 * the same snapshot, in alternating rounds, and the figures are printed side by side with their ratio: this machine's
 * absolute figures move between runs, a ratio of alternating rounds much less. Both sides' answers are compared.
 *
 * A script, not a test: it prints figures and asserts nothing about time.
 */
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandLine } from '../src/cli/args.ts';
import { openSnapshotDirectory } from '../src/node/index.ts';
import { CursorCodec, lineage, lineageFilesOf, prepareLineage, walkLineage, type LineageQuestion } from '../src/operations/index.ts';
import { LineageInput, lineageNumber } from '../src/contract/index.ts';
import { mostCited } from './lib/lineage-questions.ts';

const USAGE = `Usage: npx tsx bench/lineage.ts --snapshot DIR [options]

Finds the most-cited device of the snapshot (the most edges in its descendants shards) and the device farthest
below it (the last one its whole descendant walk reaches), then walks the whole descendant tree of the first and
the whole predicate chain of the second, each --rounds times after one cold walk, and prints the walk's p50, p99 and
max, the operation's first page of 500 (the walk, the records, the counts) and the next (from the remembered walk), and the lineage files' share of the
snapshot's bytes.

  --snapshot DIR   the snapshot (required)
  --rounds N       walks of each question (200)
  --against DIR    another checkout of the project: its walk runs in alternating rounds beside this one's, over the
                   same snapshot; prints both sides' wall and CPU p50 and p99 and the ratios (this / that), and
                   whether the two walks' answers are identical`;

const values = parseCommandLine('lineage', USAGE, {
  snapshot: { type: 'string', default: '' },
  rounds: { type: 'string', default: '200' },
  against: { type: 'string', default: '' },
});
if (!values.snapshot) {
  console.error(USAGE);
  process.exit(2);
}
const rounds = Number(values.rounds);
const snapshot = await openSnapshotDirectory(values.snapshot);
const files = await lineageFilesOf(snapshot).files;
if (files === null) throw new Error(`${values.snapshot} has no lineage files`);

const lineageBytes = snapshot.manifest.files.filter((f) => f.path.startsWith('lineage/')).reduce((s, f) => s + f.bytes, 0);
const total = snapshot.manifest.counts.bytes;

const cited = await mostCited(files);
const hub = cited.kNumber;
const down: LineageQuestion = { id: hub, direction: 'descendants', depth: null, kinds: null };
const tree = await walkLineage(files, down);
const deep = lineageNumber(tree.codes[tree.codes.length - 1] as number);
const up: LineageQuestion = { id: deep, direction: 'predicates', depth: null, kinds: null };

const cursors = new CursorCodec();
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] as number;

async function measure(question: LineageQuestion) {
  const coldStart = performance.now();
  const first = await walkLineage(files!, question);
  const cold = performance.now() - coldStart;
  const walks: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await walkLineage(files!, question);
    walks.push(performance.now() - t);
  }
  // The operation, once: the walk (not yet remembered for this question), a page of 500 with their records, the
  // counts; then the next page, from the remembered walk.
  const input = LineageInput.parse({ ...question, limit: 500, cursor: null });
  let t = performance.now();
  const page = await lineage(prepareLineage(input, { cursors }), { snapshot, servedAt: new Date(), cursors });
  const firstPage = performance.now() - t;
  let nextPage = Number.NaN;
  if (page.page?.nextCursor) {
    t = performance.now();
    await lineage(prepareLineage({ ...input, cursor: page.page.nextCursor }, { cursors }), { snapshot, servedAt: new Date(), cursors });
    nextPage = performance.now() - t;
  }
  const ops = { firstPage, nextPage };
  const levels = first.depths[first.depths.length - 1] ?? 0;
  return { devices: first.codes.length, levels, cycles: first.cycles.length, cold, walks, ops };
}

if (values.against) {
  await compare(resolve(values.against));
  process.exit(0);
}

const rows = [
  { name: `descendants of ${hub} (cited ${cited.count} times)`, ...(await measure(down)) },
  { name: `predicates of ${deep}`, ...(await measure(up)) },
];
console.log(`snapshot ${snapshot.id}: ${snapshot.manifest.counts.records.toLocaleString('en-US')} records, ${files.index.edges.toLocaleString('en-US')} edges, ${files.index.devices.toLocaleString('en-US')} devices with edges; load ${loadavg()[0]?.toFixed(1)}`);
console.log(`lineage files: ${(lineageBytes / 1e6).toFixed(1)} MB of ${(total / 1e6).toFixed(1)} MB = ${((100 * lineageBytes) / total).toFixed(2)} % of the snapshot's bytes`);
console.log('question | devices | levels | cycles | cold walk ms | walk p50 | walk p99 | walk max | first page ms | next page ms');
for (const r of rows) {
  console.log(
    [r.name, r.devices, r.levels, r.cycles, r.cold.toFixed(1), percentile(r.walks, 50).toFixed(2), percentile(r.walks, 99).toFixed(2), Math.max(...r.walks).toFixed(2), r.ops.firstPage.toFixed(1), Number.isNaN(r.ops.nextPage) ? '- (one page)' : r.ops.nextPage.toFixed(1)].join(' | '),
  );
}

type Walker = (question: LineageQuestion) => Promise<unknown>;

/** This checkout's walk and another's, in alternating rounds over the same snapshot, side by side. */
async function compare(dir: string): Promise<void> {
  const other = (await import(pathToFileURL(join(dir, 'src/operations/index.ts')).href)) as typeof import('../src/operations/index.ts');
  const theirFiles = await other.LineageFiles.open(
    (path) => snapshot.readFile(path),
    (path) => snapshot.fileEntry(path) !== undefined,
  );
  if (theirFiles === null) throw new Error(`${dir} finds no lineage files in ${values.snapshot}`);
  const ours: Walker = (q) => walkLineage(files!, q);
  const theirs: Walker = (q) => other.walkLineage(theirFiles, q);
  console.log(`snapshot ${snapshot.id}: ${snapshot.manifest.counts.records.toLocaleString('en-US')} records; this checkout against ${dir}; ${rounds} alternating rounds; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`lineage files: ${(lineageBytes / 1e6).toFixed(1)} MB of ${(total / 1e6).toFixed(1)} MB = ${((100 * lineageBytes) / total).toFixed(2)} % of the snapshot's bytes`);
  console.log('question | devices | levels | cycles | same answer | wall p50 this / that = ratio | wall p99 this / that = ratio | CPU p50 this / that = ratio | CPU p99 this / that = ratio');
  for (const [name, question] of [
    [`descendants of ${hub} (cited ${cited.count} times)`, down],
    [`predicates of ${deep}`, up],
  ] as const) {
    const a = (await ours(question)) as Awaited<ReturnType<typeof walkLineage>>;
    const b = await theirs(question);
    const same = JSON.stringify(a) === JSON.stringify(b);
    const times = { ours: { wall: [] as number[], cpu: [] as number[] }, theirs: { wall: [] as number[], cpu: [] as number[] } };
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (['ours', 'theirs'] as const) : (['theirs', 'ours'] as const);
      for (const side of order) {
        const walker = side === 'ours' ? ours : theirs;
        const cpu = process.cpuUsage();
        const t = performance.now();
        await walker(question);
        times[side].wall.push(performance.now() - t);
        const used = process.cpuUsage(cpu);
        times[side].cpu.push((used.user + used.system) / 1000);
      }
    }
    const cell = (p: number, kind: 'wall' | 'cpu') => {
      const x = percentile(times.ours[kind], p);
      const y = percentile(times.theirs[kind], p);
      return `${x.toFixed(2)} / ${y.toFixed(2)} = ${(x / y).toFixed(3)}`;
    };
    const levels = a.depths[a.depths.length - 1] ?? 0;
    console.log([name, a.codes.length, levels, a.cycles.length, same ? 'yes' : 'NO', cell(50, 'wall'), cell(99, 'wall'), cell(50, 'cpu'), cell(99, 'cpu')].join(' | '));
  }
  console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}
