import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';

/**
 * The bench in sections: each section's figures are printed, and appended to a file of one JSON line per section,
 * as soon as the section finishes and before the next begins. A run stopped by its time limit, a crash or a person
 * keeps every section it finished, on the screen and in the file.
 */
export type Section<T> = {
  /** The size it measures ("175k"), or null for a section of the whole run. */
  size: string | null;
  name: string;
  run: () => Promise<T>;
  /** The figures as the run prints them (a table). */
  render: (figures: T) => string;
};

export type SectionOutput = {
  /** Writes text where the run's figures go (stdout). */
  print: (text: string) => void;
  /** The file of JSON lines, one per finished section, or null for none. */
  file: string | null;
  /** The run's start, which every line of the file carries, so lines of several runs tell apart. */
  runStartedAt: string;
  mode: string;
};

/** One line of the file. */
export type SectionLine<T = unknown> = {
  runStartedAt: string;
  mode: string;
  size: string | null;
  section: string;
  finishedAt: string;
  seconds: number;
  loadAverage: number[];
  figures: T;
};

export async function runSection<T>(section: Section<T>, out: SectionOutput): Promise<T> {
  const started = Date.now();
  const figures = await section.run();
  const seconds = (Date.now() - started) / 1000;
  const line: SectionLine<T> = {
    runStartedAt: out.runStartedAt,
    mode: out.mode,
    size: section.size,
    section: section.name,
    finishedAt: new Date().toISOString(),
    seconds,
    loadAverage: loadavg(),
    figures,
  };
  const title = `${section.size === null ? '' : `${section.size}: `}${section.name}`;
  out.print(`\n### ${title} (${seconds.toFixed(0)} s, load ${line.loadAverage.map((x) => x.toFixed(1)).join(' ')})\n\n${section.render(figures)}\n`);
  if (out.file !== null) {
    await mkdir(dirname(out.file), { recursive: true });
    await appendFile(out.file, `${JSON.stringify(line)}\n`);
  }
  return figures;
}
