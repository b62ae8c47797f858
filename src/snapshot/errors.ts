/** `actual` is the sha256 of what was read, or `unreadable` when the file could not be read at all. */
export type CorruptFileReport = { snapshotId: string; dir: string; path: string; expected: string; actual: string };

/** What `CorruptFileReport.actual` says when a listed file could not be read (gone, a link, a directory). */
export const UNREADABLE = 'unreadable';

/** Thrown when a directory is not a complete, valid snapshot; the message lists why. */
export class InvalidSnapshot extends Error {
  override readonly name = 'InvalidSnapshot';
  readonly dir: string;
  constructor(dir: string, reason: string) {
    super(`${dir} is not a valid snapshot: ${reason}`);
    this.dir = dir;
  }
}

/**
 * Thrown when a file's bytes do not match the sha256 the manifest lists for it (or a record's bytes the digest the
 * record table lists): the file was damaged after the build, and what it holds is not served. Not remembered, so a
 * file repaired in place is served again.
 */
export class CorruptFile extends Error {
  override readonly name = 'CorruptFile';
  readonly report: CorruptFileReport;
  constructor(report: CorruptFileReport) {
    super(
      report.actual === UNREADABLE
        ? `${report.path} of snapshot ${report.snapshotId} cannot be read`
        : `${report.path} of snapshot ${report.snapshotId} does not match its sha256 in the manifest`,
    );
    this.report = report;
  }
}
