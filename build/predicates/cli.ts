/**
 * `npm run predicates -- extract --in DIR (--out FILE.csv [--report FILE.csv] | --edges DIR)`: reads every summary
 * in DIR named by its number (`K123456.pdf` with a text layer, `.txt` or `.md`) and writes the predicates it names.
 */
import { parseCommandLine, runSubcommand, UsageError } from '../../src/cli/args.ts';
import { join } from 'node:path';
import { clearancesIn, clearancesToFetch } from './devices.ts';
import { fetchSummaries, SUMMARY_DEFAULTS, summaryPaths, type SummaryOptions } from './fetch.ts';
import { listSummaries, readSummary } from './read.ts';
import { edgesCsv, judge, reportCsv, writeAtomic, writeEdgeFolder, type ReportRow } from './run.ts';

const USAGE = `Usage: npm run predicates -- <command> [options]

Commands:
  extract   read the 510(k) summaries in a folder and write the predicates they name
  sync      fetch the summaries of recent clearances from FDA, keep them, and write the edge folder
  backfill  the same for every clearance, newest first, at a polite rate; resumable

extract options:
  --in DIR        the summaries: K123456.pdf (with a text layer), K123456.txt or K123456.md, one per device
  --out FILE      the edges, CSV with the header device,predicate
  --report FILE   per device: device,status,predicates,reason (status: read, no-text, unreadable, missing)
  --edges DIR     instead of --out and --report: an edge input folder for the build
                  (predicates.csv, report.csv, source.json)
  --source ID     the source id written to source.json with --edges (default summary)
  --quiet         print only the closing line

sync and backfill options:
  --dir DIR       the sync's folder (default .sync): summaries/ keeps the PDFs and state.json,
                  predicates/summary/ is the edge folder the build reads
  --source PATH   FDA's 510(k) files listing the clearances, repeatable (default DIR/sources)
  --days N        sync: clearances decided within N days of the newest one (default 90)
  --base-url URL  where the summaries are (default ${SUMMARY_DEFAULTS.baseUrl}; env PREDICATES_BASE_URL)
  --rate N        requests per second at most (default 1000 / ${SUMMARY_DEFAULTS.intervalMs} ms = 1)
  --limit N       at most N downloads in this run
  --timeout MS    per attempt, whole body included (default ${SUMMARY_DEFAULTS.timeoutMs})
  --retries N     retries after the first attempt (default ${SUMMARY_DEFAULTS.retries})
  --max-attempts N  runs a failing download is tried in before it is left (default ${SUMMARY_DEFAULTS.maxAttempts})
  --max-summary-bytes N  the most one summary may be, as sent or decoded (default ${SUMMARY_DEFAULTS.maxBytes / 2 ** 20} MiB)
  --base DIR      an edge folder (with report.csv) that stands for the devices not fetched, such as
                  data/fda/predicates/summary
  --quiet         print only the closing line`;

const FETCH_ARGS = {
  dir: { type: 'string' },
  source: { type: 'string', multiple: true },
  days: { type: 'string' },
  'base-url': { type: 'string' },
  rate: { type: 'string' },
  limit: { type: 'string' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
  'max-attempts': { type: 'string' },
  'max-summary-bytes': { type: 'string' },
  base: { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

function positive(name: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} must be a ${integer ? 'whole ' : ''}number above 0, not '${value}'`);
  return n;
}

async function fetchCommand(command: 'sync' | 'backfill', args: string[]): Promise<void> {
  const v = parseCommandLine(`predicates ${command}`, USAGE, FETCH_ARGS, args);
  if (command === 'backfill' && v.days !== undefined) throw new UsageError('--days is for sync: backfill fetches every clearance');
  const dir = v.dir ?? '.sync';
  const days = positive('days', v.days, true) ?? 90;
  const rate = positive('rate', v.rate, false);
  const retries = v.retries === undefined ? undefined : Number(v.retries);
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0)) throw new UsageError(`--retries must be a whole number from 0, not '${v.retries}'`);
  const picked = clearancesToFetch(await clearancesIn(v.source ?? [join(dir, 'sources')]), command === 'sync' ? { days } : null);
  const options: Partial<SummaryOptions> & { dir: string; devices: string[] } = {
    dir,
    ...picked,
    ...(v.base !== undefined && { base: v.base }),
    baseUrl: v['base-url'] ?? process.env.PREDICATES_BASE_URL ?? SUMMARY_DEFAULTS.baseUrl,
    ...(rate !== undefined && { intervalMs: 1000 / rate }),
    ...(v.limit !== undefined && { limit: positive('limit', v.limit, true) as number }),
    ...(v.timeout !== undefined && { timeoutMs: positive('timeout', v.timeout, true) as number }),
    ...(retries !== undefined && { retries }),
    ...(v['max-attempts'] !== undefined && { maxAttempts: positive('max-attempts', v['max-attempts'], true) as number }),
    ...(v['max-summary-bytes'] !== undefined && { maxBytes: positive('max-summary-bytes', v['max-summary-bytes'], true) as number }),
    log: v.quiet ? undefined : (line: string) => console.log(line),
  };
  const r = await fetchSummaries(options);
  console.log(
    `predicates ${command}: ${picked.devices.length} clearances, ${r.fetched} fetched, ${r.missing} missing at FDA, ${r.failed} failed, ${r.skipped} already kept or left; ${r.edges} edges for ${r.devices} devices in ${summaryPaths(dir).edges}`,
  );
}

const EXTRACT_ARGS = {
  in: { type: 'string' },
  out: { type: 'string' },
  report: { type: 'string' },
  edges: { type: 'string' },
  source: { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

async function extract(args: string[]): Promise<void> {
  const v = parseCommandLine('predicates extract', USAGE, EXTRACT_ARGS, args);
  if (!v.in) throw new UsageError('--in is required');
  if (!v.out && !v.edges) throw new UsageError('one of --out or --edges is required');
  if (v.edges && (v.out || v.report)) throw new UsageError('--edges writes its own files: give it alone, without --out or --report');
  const { files, skipped } = await listSummaries(v.in);
  const log = (line: string) => {
    if (!v.quiet) console.log(line);
  };
  for (const name of skipped) console.error(`predicates extract: skipped ${name}: not a summary named by its K, DEN or P number (.pdf, .txt or .md), or another file of the same device`);
  const rows: ReportRow[] = [];
  for (const file of files) {
    const row = judge(file.device, await readSummary(file));
    rows.push(row);
    log(`${row.device} ${row.status} ${row.predicates.join(' ') || '-'}`);
  }
  if (v.edges) await writeEdgeFolder(v.edges, rows, v.source);
  else {
    await writeAtomic(v.out as string, edgesCsv(rows));
    if (v.report) await writeAtomic(v.report, reportCsv(rows));
  }
  const read = rows.filter((r) => r.status === 'read').length;
  const withPredicate = rows.filter((r) => r.predicates.length > 0).length;
  const pairs = rows.reduce((n, r) => n + r.predicates.length, 0);
  console.log(`predicates extract: ${files.length} summaries, ${read} read, ${withPredicate} with a predicate, ${pairs} edges${skipped.length ? `, ${skipped.length} files skipped` : ''}`);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  extract,
  sync: (args) => fetchCommand('sync', args),
  backfill: (args) => fetchCommand('backfill', args),
};

runSubcommand('predicates', USAGE, COMMANDS);
