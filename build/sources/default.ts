import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const DEFAULT_SOURCES_FILE = fileURLToPath(new URL('../../data/fda/sources.json', import.meta.url));

const SourcesFile = z.object({ sources: z.array(z.string()).min(1), edges: z.array(z.string()).default([]), notes: z.array(z.string()).default([]) });

/**
 * The bundled FDA files the default build reads, in precedence order, the folders whose edge inputs it reads
 * (build/lineage/read.ts: every folder below them holding a predicates.csv and a source.json), and the notes that
 * describe them.
 */
export async function defaultSources(file = DEFAULT_SOURCES_FILE): Promise<{ sources: string[]; edges: string[]; notes: string[] }> {
  const parsed = SourcesFile.parse(JSON.parse(await readFile(file, 'utf8')));
  // Absolute paths; the reader names each file relative to the working directory (sources/read.ts, displayName).
  const here = (p: string) => join(dirname(file), p);
  return { sources: parsed.sources.map(here), edges: parsed.edges.map(here), notes: parsed.notes };
}
