/**
 * `npm run predicates -- extract --in DIR (--out FILE.csv [--report FILE.csv] | --edges DIR)`: reads every summary
 * in DIR named by its number (`K123456.pdf` with a text layer, `.txt` or `.md`) and writes the predicates it names.
 */
import { parseCommandLine, runCommand, UsageError } from '../../src/cli/args.ts';
import { listSummaries, readSummary } from './read.ts';
import { edgesCsv, judge, reportCsv, writeAtomic, writeEdgeFolder, type ReportRow } from './run.ts';

const USAGE = `Usage: npm run predicates -- <command> [options]

Commands:
  extract   read the 510(k) summaries in a folder and write the predicates they name

extract options:
  --in DIR        the summaries: K123456.pdf (with a text layer), K123456.txt or K123456.md, one per device
  --out FILE      the edges, CSV with the header device,predicate
  --report FILE   per device: device,status,predicates,reason (status: read, no-text, unreadable, missing)
  --edges DIR     instead of --out and --report: an edge input folder for the build
                  (predicates.csv, report.csv, source.json)
  --source ID     the source id written to source.json with --edges (default summary)
  --quiet         print only the closing line`;

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

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = { extract };

const [command, ...rest] = process.argv.slice(2);
if (command === undefined || command === '--help' || command === '-h') {
  console.log(USAGE);
  process.exit(command === undefined ? 2 : 0);
}
const run = COMMANDS[command];
if (!run) {
  console.error(`predicates: unknown command '${command}' (see --help)`);
  process.exit(2);
}
runCommand(`predicates ${command}`, () => run(rest));
