import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { PAGE_DIR, writePageCopies } from './page/copies.ts';
import { runBuild } from './snapshot/build.ts';
import { defaultSources } from './sources/default.ts';
import { SYNC_ARGS, SYNC_USAGE, syncOptionsFrom } from './sync/cli.ts';
import { reportSyncOutcome, runSync } from './sync/run.ts';

const USAGE = `Usage: npm run build -- [--source PATH]... [--out DIR] [--pagefind] [--quiet]
       npm run build -- --fetch [sync options]

  --source PATH   a pmn*.txt, foiclass.txt, openFDA .json or .zip file, or a folder of them; repeatable,
                  in precedence order (a later source overrides an earlier one). Default: the bundled files
                  listed in data/fda/sources.json, with the edge folders below data/fda/predicates/.
                  A folder holding predicates.csv and source.json (at any depth below a --source
                  folder) is read as edges between devices (docs/lineage.md).
  --out DIR       where the snapshot is published (a symbolic link to the build). Default: snapshot
  --quiet         no progress lines
  --pagefind      also write a Pagefind index (pagefind/, about one file per 25 clearances) for pages that
                  search with Pagefind; off by default: the page searches the snapshot's own chunked index
  --history-days N  days of change history the snapshot keeps (history/); older change sets are dropped.
                  Default: 400
  --fetch         download FDA's current files first and build from them, exactly as \`npm run sync\`;
                  it takes the sync's options and environment variables instead of --source:
${SYNC_USAGE.replace(/^/gm, '  ')}
Environment: SOURCE_DATE_EPOCH fixes the generation time, for reproducible builds.`;

/** Options that only a sync understands: with --fetch they go to it, without it they are a mistake. */
const SYNC_ONLY = Object.keys(SYNC_ARGS).filter((name) => name !== 'out' && name !== 'quiet' && name !== 'pagefind');

async function main(): Promise<void> {
  const values = parseCommandLine('build', USAGE, {
    ...SYNC_ARGS,
    source: { type: 'string', multiple: true },
    fetch: { type: 'boolean' },
    'history-days': { type: 'string' },
  });
  if (values.fetch) {
    if (values['history-days'] !== undefined) throw new UsageError('--history-days applies to a build from --source; a --fetch build keeps the default 400 days');
    if (values.source?.length) throw new UsageError('--fetch builds from the downloaded files; leave out --source');
    reportSyncOutcome(await runSync(await syncOptionsFrom(values)));
    await writePageCopies(PAGE_DIR);
    return;
  }
  const historyText = values['history-days'];
  if (historyText !== undefined && !/^[1-9]\d{0,5}$/.test(historyText)) throw new UsageError(`--history-days must be a whole number of days from 1 up, got "${historyText}"`);
  const stray = SYNC_ONLY.find((name) => values[name as keyof typeof values] !== undefined);
  if (stray) throw new UsageError(`--${stray} is a sync option; it applies only with --fetch`);
  const out = values.out ?? 'snapshot';
  const bundled = values.source?.length ? null : await defaultSources();
  const result = await runBuild({
    sources: values.source ?? bundled?.sources ?? [],
    edges: bundled?.edges ?? [],
    notes: bundled?.notes ?? [],
    out,
    progress: !values.quiet,
    pagefind: values.pagefind === true,
    ...(historyText !== undefined && { historyDays: Number(historyText) }),
  });
  const copies = await writePageCopies(PAGE_DIR);
  const s = result.stats;
  const lines = [
    `snapshot ${result.manifest.snapshotId} published at ${out}`,
    `  records        ${s.records.toLocaleString('en-US')}`,
    `  files          ${s.files.toLocaleString('en-US')} (${(s.bytes / 1e6).toFixed(1)} MB)`,
    `  skipped rows   ${s.skippedRows.toLocaleString('en-US')}${Object.entries(s.skippedByReason).map(([r, c]) => `\n    ${c.toLocaleString('en-US').padStart(8)}  ${r}`).join('')}`,
    `  merged rows    ${result.report.merged.length.toLocaleString('en-US')}`,
    `  field issues   ${result.report.fieldIssues.length.toLocaleString('en-US')}${Object.entries(result.report.fieldIssuesByReason).map(([r, c]) => `\n    ${c.toLocaleString('en-US').padStart(8)}  ${r}`).join('')}`,
    `  history        ${result.history.sets} change sets, complete since ${result.history.completeSince}${result.history.dropped.map((d) => `\n    dropped: ${d}`).join('')}`,
    `  seconds        ${s.seconds.toFixed(1)}`,
    `  peak memory    ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    `  full report    ${out}/report.json`,
    `  page copies    ${copies.length} precompressed files beside public/'s (for static hosts)`,
  ];
  console.log(lines.join('\n'));
}

runCommand('build', main, ['the published snapshot, if any, was left as it was']);
