import { parseArgs } from 'node:util';
import { runBuild } from './pipeline.ts';
import { defaultSources } from './sources/default.ts';
import { reportSyncOutcome, runSync } from './sync/run.ts';

const USAGE = `Usage: npm run build -- [--source PATH]... [--out DIR] [--fetch] [--quiet]

  --source PATH   a pmn*.txt, foiclass.txt, openFDA .json or .zip file, or a folder of them; repeatable,
                  in precedence order (a later source overrides an earlier one). Default: the bundled files
                  listed in data/fda/sources.json.
  --out DIR       where the snapshot is published (a symbolic link to the build). Default: snapshot
  --fetch         download FDA's current files first and build from them: the same as \`npm run sync\`
                  (see \`npm run sync -- --help\` for its options)
  --quiet         no progress lines
Environment: SOURCE_DATE_EPOCH fixes the generation time, for reproducible builds.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      source: { type: 'string', multiple: true },
      out: { type: 'string', default: 'snapshot' },
      quiet: { type: 'boolean', default: false },
      fetch: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.fetch) {
    if (values.source?.length) throw new Error('--fetch builds from the downloaded files; leave out --source');
    const result = await runSync({ out: values.out, log: values.quiet ? undefined : (line) => console.error(line) });
    reportSyncOutcome(result);
    return;
  }
  const bundled = values.source?.length ? null : await defaultSources();
  const result = await runBuild({
    sources: values.source ?? bundled?.sources ?? [],
    notes: bundled?.notes ?? [],
    out: values.out,
    progress: !values.quiet,
  });
  const s = result.stats;
  const lines = [
    `snapshot ${result.manifest.snapshotId} published at ${values.out}`,
    `  records        ${s.records.toLocaleString('en-US')}`,
    `  files          ${s.files.toLocaleString('en-US')} (${(s.bytes / 1e6).toFixed(1)} MB)`,
    `  skipped rows   ${s.skippedRows.toLocaleString('en-US')}${Object.entries(s.skippedByReason).map(([r, c]) => `\n    ${c.toLocaleString('en-US').padStart(8)}  ${r}`).join('')}`,
    `  merged rows    ${result.report.merged.length.toLocaleString('en-US')}`,
    `  field issues   ${result.report.fieldIssues.length.toLocaleString('en-US')}${Object.entries(result.report.fieldIssuesByReason).map(([r, c]) => `\n    ${c.toLocaleString('en-US').padStart(8)}  ${r}`).join('')}`,
    `  seconds        ${s.seconds.toFixed(1)}`,
    `  peak memory    ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    `  full report    ${values.out}/report.json`,
  ];
  console.log(lines.join('\n'));
}

main().catch((err: unknown) => {
  console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
  console.error('the published snapshot, if any, was left as it was');
  process.exitCode = 1;
});
