import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuild, type BuildResult } from '../../build/snapshot/build.ts';
import { testTempDir } from './temp-dirs.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/fda/${name}`, import.meta.url));

/** Real FDA rows in every layout the build reads, in precedence order (see test/fixtures/README.md). */
export const FIXTURE_SOURCES = [
  fixture('openfda-510k-sample.json'),
  fixture('pmn-1976-1990-sample.txt'),
  fixture('pmnlstmn-2020-sample.txt'),
  fixture('foiclass-sample.txt'),
  fixture('predicates'),
];

/** 2026-01-01T00:00:00Z: a fixed generation time, so fixture snapshots are reproducible. */
export const FIXTURE_EPOCH = 1_767_225_600;

/** Builds the fixture sources into a fresh temporary `snapshot` link; returns the link's path and the build. */
export async function buildFixture(
  options: { sources?: string[]; epoch?: number; out?: string; pagefind?: boolean } = {},
): Promise<BuildResult & { out: string }> {
  const out = options.out ?? join(await testTempDir('device-510k-'), 'snapshot');
  const result = await runBuild({
    sources: options.sources ?? FIXTURE_SOURCES,
    out,
    sourceDateEpoch: options.epoch ?? FIXTURE_EPOCH,
    pagefind: options.pagefind ?? false,
  });
  return { ...result, out };
}

let shared: Promise<string> | undefined;

/** One fixture snapshot per test file (built on first use); returns the path of its `snapshot` link. */
export function buildFixtureSnapshot(): Promise<string> {
  shared ??= buildFixture().then((r) => r.out);
  return shared;
}
