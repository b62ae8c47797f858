/**
 * One build in its own process, so that its peak resident memory is the build's alone. Prints one JSON line:
 * seconds, peak RSS (the kernel's high-water mark), records, files, bytes, snapshot id and directory.
 *
 *   node --import tsx bench/lib/build-child.ts OUT SOURCE…
 */
import { runBuild } from '../../build/snapshot/build.ts';
import type { Reporter } from '../../build/progress/reporter.ts';

export type BuildFigures = {
  seconds: number;
  peakRssBytes: number;
  records: number;
  files: number;
  bytes: number;
  snapshotId: string;
  dir: string;
  /** Seconds per stage of the build, in order: where the time goes as the data grows. */
  stages: { name: string; seconds: number }[];
};

const [out, ...sources] = process.argv.slice(2);
if (!out || sources.length === 0) throw new Error('Expected an output path and at least one source');
const stages: BuildFigures['stages'] = [];
let stageStarted = 0;
const timings: Reporter = {
  stage(name) {
    stageStarted = performance.now();
    stages.push({ name, seconds: 0 });
  },
  update() {},
  end() {
    const last = stages[stages.length - 1];
    if (last) last.seconds = (performance.now() - stageStarted) / 1000;
  },
};
const started = performance.now();
// A fixed generation time: the same inputs then give the same snapshot id, run after run.
const result = await runBuild({ sources, out, sourceDateEpoch: 0, progress: timings });
const figures: BuildFigures = {
  seconds: (performance.now() - started) / 1000,
  peakRssBytes: Math.max(process.resourceUsage().maxRSS * 1024, result.stats.peakRssBytes),
  records: result.stats.records,
  files: result.stats.files,
  bytes: result.stats.bytes,
  snapshotId: result.manifest.snapshotId,
  dir: result.dir,
  stages,
};
process.stdout.write(`${JSON.stringify(figures)}\n`);
