import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const DEFAULT_SOURCES_FILE = fileURLToPath(new URL('../../data/fda/sources.json', import.meta.url));

const SourcesFile = z.object({ sources: z.array(z.string()).min(1), notes: z.array(z.string()).default([]) });

/** The bundled FDA files the default build reads, in precedence order, and the notes that describe them. */
export async function defaultSources(file = DEFAULT_SOURCES_FILE): Promise<{ sources: string[]; notes: string[] }> {
  const parsed = SourcesFile.parse(JSON.parse(await readFile(file, 'utf8')));
  const base = dirname(file);
  // Relative to the working directory when inside it, so that reports name files the same way on every machine.
  const show = (p: string) => {
    const abs = join(base, p);
    const rel = relative(process.cwd(), abs);
    return rel.startsWith('..') ? abs : rel;
  };
  return { sources: parsed.sources.map(show), notes: parsed.notes };
}
