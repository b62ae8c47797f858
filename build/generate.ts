import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { buildPool, parsePmnText, type PmnFile } from './generate/pool.ts';
import { DEFAULT_ROWS_PER_FILE, DEFAULT_SEED, generatePmnFiles } from './generate/rows.ts';
import { generateEdges } from './generate/edges.ts';

/**
 * The scale generator: derives N realistic 510(k) rows from the real pmn files, in FDA's pipe layout, so the build
 * and everything after it can be measured at FDA's size (about 175,000) and at 1,000,000.
 *
 *   npm run generate -- --records 175000 --out bench/out/175k [--seed 510k] [--source data/fda/510k]
 */
export type RunGenerateOptions = { records: number; out: string; seed?: string; source?: string; rowsPerFile?: number };
export type RunGenerateResult = { files: { path: string; rows: number; bytes: number }[]; edges: number; ms: number };

/** The folder of generated predicate edges inside `--out`: an edge input the build reads with the pmn files. */
export const GENERATED_EDGES_DIR = 'predicates-generated';

export const DEFAULT_SOURCE = 'data/fda/510k';

export async function runGenerate(options: RunGenerateOptions): Promise<RunGenerateResult> {
  const started = performance.now();
  const sourceFiles = await findPmnFiles(options.source ?? DEFAULT_SOURCE);
  if (sourceFiles.length === 0) throw new Error(`no pmn*.txt files under ${options.source ?? DEFAULT_SOURCE}`);
  const parsed: PmnFile[] = [];
  for (const path of sourceFiles) parsed.push(parsePmnText(path, (await readFile(path)).toString('latin1')));
  const pool = buildPool(parsed);
  const generated = generatePmnFiles(pool, {
    records: options.records,
    seed: options.seed ?? DEFAULT_SEED,
    rowsPerFile: options.rowsPerFile ?? DEFAULT_ROWS_PER_FILE,
  });

  await mkdir(options.out, { recursive: true });
  // Files of an earlier, larger run would otherwise be read by the build as part of this set.
  for (const name of await readdir(options.out)) {
    if (/^pmn-generated-\d+\.txt$/.test(name)) await rm(join(options.out, name));
  }
  const files: RunGenerateResult['files'] = [];
  for (const file of generated) {
    const bytes = Buffer.from(file.text, 'latin1');
    const path = join(options.out, file.name);
    await writeFile(path, bytes);
    files.push({ path, rows: file.rows, bytes: bytes.byteLength });
  }
  const edges = generateEdges(generated, pool.header, options.seed ?? DEFAULT_SEED);
  const edgeDir = join(options.out, GENERATED_EDGES_DIR);
  await mkdir(edgeDir, { recursive: true });
  await writeFile(join(edgeDir, 'predicates.csv'), edges.csv);
  await writeFile(join(edgeDir, 'source.json'), `${JSON.stringify({ source: 'generated', kind: 'named' })}\n`);
  return { files, edges: edges.edges, ms: performance.now() - started };
}

/** Every `pmn*.txt` below `dir`, in a stable order so that a seed always draws from the same list. */
async function findPmnFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries
    .filter((rel) => /^pmn.*\.txt$/i.test(basename(rel)))
    .map((rel) => join(dir, rel))
    .sort();
}

const USAGE = `Usage: npm run generate -- --records N --out DIR [options]

Writes N realistic 510(k) rows in FDA's pipe layout, derived from the real pmn files, for measuring the build and
the server at scale, and predicate edges between them (predicates-generated/, an edge input the build reads). The same seed and sources always give the same files.

  --records N         how many records to write (required)
  --out DIR           the folder to write pmn-generated-*.txt into (required)
  --seed TEXT         the random seed (default ${DEFAULT_SEED})
  --source DIR        the real pmn*.txt files to draw from (default ${DEFAULT_SOURCE})
  --rows-per-file N   rows per written file (default ${DEFAULT_ROWS_PER_FILE})`;

async function main(): Promise<void> {
  const values = parseCommandLine('generate', USAGE, {
    records: { type: 'string' },
    out: { type: 'string' },
    seed: { type: 'string', default: DEFAULT_SEED },
    source: { type: 'string', default: DEFAULT_SOURCE },
    'rows-per-file': { type: 'string', default: String(DEFAULT_ROWS_PER_FILE) },
  });
  const records = Number(values.records);
  if (values.records === undefined || !Number.isInteger(records)) throw new UsageError('Expected `--records` to be an integer, for example --records 175000');
  if (!values.out) throw new UsageError('Expected `--out` to name the directory to write into');
  const result = await runGenerate({
    records,
    out: values.out,
    seed: values.seed,
    source: values.source,
    rowsPerFile: Number(values['rows-per-file']),
  });
  for (const f of result.files) console.log(`${relative(process.cwd(), f.path)}: ${f.rows} rows, ${f.bytes} bytes`);
  const rows = result.files.reduce((s, f) => s + f.rows, 0);
  console.log(`generated ${rows} records in ${result.files.length} file(s) and ${result.edges} predicate edges (${GENERATED_EDGES_DIR}/) in ${(result.ms / 1000).toFixed(2)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) runCommand('generate', main);
