import { watch, type FSWatcher } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LAYOUT } from '../contract/index.ts';
import { checkListedFiles } from './files.ts';
import { openSnapshotDirectory } from './open-directory.ts';
import type { Snapshot, SnapshotOptions } from '../snapshot/snapshot.ts';

export type SnapshotSourceOptions = {
  snapshot?: SnapshotOptions;
  /** How often the link is re-read, in milliseconds, in case a file-system event is missed; 0 turns polling off. */
  pollMs: number;
  /** Also react to file-system events on the link's folder (default true). */
  watch: boolean;
  /**
   * Runs on a new, valid snapshot before it is switched in (loading the search index, for example), so that the
   * first requests on it do not pay for the loading. A failure is reported and does not stop the switch.
   */
  prepare?: (next: Snapshot) => Promise<void>;
  onPrepareError?: (next: Snapshot, error: Error) => void;
  onSwitch?: (next: Snapshot, previous: Snapshot | null) => void;
  onRefuse?: (target: string, error: Error) => void;
  /** The serving snapshot was dropped: its folder or files went away, so nothing is served until a valid one is. */
  onDrop?: (dropped: Snapshot, reason: string) => void;
};

/** A refused snapshot is opened again on the poll after this long, doubling up to REFUSED_RETRY_MAX_MS. */
const REFUSED_RETRY_MIN_MS = 1000;
const REFUSED_RETRY_MAX_MS = 60_000;

export type CheckResult = 'unchanged' | 'switched' | 'refused' | 'missing';

/**
 * Follows the `snapshot` link (or a plain directory) and switches to what it points at when a build publishes a new
 * snapshot. A new target is opened and validated before it replaces the current one; a broken one is refused,
 * reported once, and the current snapshot keeps serving. A refused one is opened again on `check({ retry: true })`
 * (SIGHUP) and, less and less often, on the poll, so a snapshot repaired in place is taken without a new publish.
 * When the serving snapshot's own files go away (its folder deleted, a listed file gone or cut short), it is
 * dropped: `current` is null and `problem` says why, until a valid snapshot is there again. Requests read `current`
 * once and keep that object, so in-flight requests finish on the snapshot they started on.
 */
export class SnapshotSource {
  readonly path: string;
  private snapshot: Snapshot | null = null;
  private currentKey: string | null = null;
  /** The serving snapshot's manifest (inode, time, size) when it was opened: it must stay the same file. */
  private currentManifest: string | null = null;
  private refusedKey: string | null = null;
  private refusedReason: string | null = null;
  private retryAt = 0;
  private retryDelayMs = REFUSED_RETRY_MIN_MS;
  private why: string | null = 'no snapshot has been looked at yet';
  private running: Promise<CheckResult> | null = null;
  private again = false;
  private retryAsked = false;
  private filesAsked = false;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly options: SnapshotSourceOptions;

  constructor(path: string, options: SnapshotSourceOptions) {
    this.path = resolve(path);
    this.options = options;
  }

  /** The snapshot serving now, or null when none valid has been found. */
  get current(): Snapshot | null {
    return this.snapshot;
  }

  /** Why no snapshot is serving (null while one is). */
  get problem(): string | null {
    return this.snapshot ? null : this.why;
  }

  /**
   * Told that a file of the serving snapshot could not be read or did not match: checks at once that every listed
   * file is still there with its size, and drops the snapshot if not.
   */
  fileFailed(snapshot: Snapshot): void {
    if (snapshot !== this.snapshot) return;
    this.filesAsked = true;
    void this.check();
  }

  /** Loads the snapshot the path points at now, then starts watching for switches. */
  async start(): Promise<CheckResult> {
    const result = await this.check();
    const pollMs = this.options.pollMs;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.check(), pollMs);
      this.timer.unref();
    }
    if (this.options.watch) {
      try {
        const name = basename(this.path);
        this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
          if (file === null || file === name) void this.check();
        });
        // Watching is an accelerator; polling still notices a switch if the watcher fails.
        this.watcher.on('error', () => this.watcher?.close());
      } catch {
        this.watcher = null;
      }
    }
    return result;
  }

  /**
   * Looks at the path again and switches if it names another snapshot. Calls made while a check runs are folded
   * into one more check after it, so a burst of events opens each new snapshot once.
   */
  check(options: { retry?: boolean } = {}): Promise<CheckResult> {
    if (options.retry) this.retryAsked = true;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<CheckResult> => {
      let result: CheckResult;
      do {
        this.again = false;
        const retry = this.retryAsked;
        const files = this.filesAsked;
        this.retryAsked = false;
        this.filesAsked = false;
        await this.checkServing(files);
        result = await this.checkOnce(retry);
      } while (this.again);
      return result;
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    this.snapshot?.close();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
  }

  /** Drops the serving snapshot when its manifest is no longer the file it was opened from, or (when asked) a listed file is gone. */
  private async checkServing(files: boolean): Promise<void> {
    const serving = this.snapshot;
    if (!serving) return;
    const now = await manifestStamp(serving.dir);
    let reason: string | null = null;
    if (now !== this.currentManifest) {
      reason = now === null ? `the snapshot folder ${serving.dir} or its manifest is gone` : `the manifest of ${serving.dir} was changed in place`;
    } else if (files) {
      const problems = await checkListedFiles(serving.dir, serving.manifest.files);
      if (problems.length > 0) reason = `files of ${serving.dir} are missing or changed: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}`;
    }
    if (reason === null || serving !== this.snapshot) return;
    this.snapshot = null;
    this.currentKey = null;
    this.currentManifest = null;
    this.why = reason;
    serving.close();
    this.options.onDrop?.(serving, reason);
  }

  private async checkOnce(retry: boolean): Promise<CheckResult> {
    const target = await realpath(this.path).catch(() => null);
    if (target === null) {
      if (!this.snapshot) this.why = `${this.path} does not exist`;
      return 'missing';
    }
    // The manifest's inode and time tell a rewritten plain directory from the same one, at the cost of one stat.
    const stamp = await manifestStamp(target);
    const key = `${target}\0${stamp ?? 'none'}`;
    if (key === this.currentKey) return 'unchanged';
    // A refused snapshot may be repaired in place without its manifest changing: open it again when asked to
    // (SIGHUP), and on the poll after a delay that doubles, so a broken folder is not re-read every second.
    if (key === this.refusedKey && !retry && Date.now() < this.retryAt) return 'refused';
    try {
      const next = await openSnapshotDirectory(target, this.options.snapshot);
      if (this.options.prepare) {
        await this.options.prepare(next).catch((err: unknown) => this.options.onPrepareError?.(next, err instanceof Error ? err : new Error(String(err))));
      }
      const previous = this.snapshot;
      this.snapshot = next;
      this.currentKey = key;
      this.currentManifest = stamp;
      this.refusedKey = null;
      this.refusedReason = null;
      this.why = null;
      previous?.close();
      this.options.onSwitch?.(next, previous);
      return 'switched';
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      const again = key === this.refusedKey;
      this.retryDelayMs = again ? Math.min(REFUSED_RETRY_MAX_MS, this.retryDelayMs * 2) : Math.max(REFUSED_RETRY_MIN_MS, this.options.pollMs);
      this.retryAt = Date.now() + this.retryDelayMs;
      // Reported once per snapshot and reason, however often it is opened again.
      if (!again || error.message !== this.refusedReason) this.options.onRefuse?.(target, error);
      this.refusedKey = key;
      this.refusedReason = error.message;
      if (!this.snapshot) this.why = error.message;
      return 'refused';
    }
  }
}

async function manifestStamp(dir: string): Promise<string | null> {
  const st = await stat(join(dir, LAYOUT.manifest)).catch(() => null);
  return st ? `${st.ino}:${st.mtimeMs}:${st.size}` : null;
}
