import { watch, type FSWatcher } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LAYOUT } from '../contract/index.ts';
import { Snapshot, type SnapshotOptions } from './snapshot.ts';

export type SnapshotSourceOptions = {
  snapshot?: SnapshotOptions;
  /** How often the link is re-read, in milliseconds, in case a file-system event is missed; 0 turns polling off. */
  pollMs?: number;
  /** Also react to file-system events on the link's folder (default true). */
  watch?: boolean;
  /**
   * Runs on a new, valid snapshot before it is switched in (loading the search index, for example), so that the
   * first requests on it do not pay for the loading. A failure is reported and does not stop the switch.
   */
  prepare?: (next: Snapshot) => Promise<void>;
  onPrepareError?: (next: Snapshot, error: Error) => void;
  onSwitch?: (next: Snapshot, previous: Snapshot | null) => void;
  onRefuse?: (target: string, error: Error) => void;
};

export type CheckResult = 'unchanged' | 'switched' | 'refused' | 'missing';

/**
 * Follows the `snapshot` link (or a plain directory) and switches to what it points at when a build publishes a new
 * snapshot. A new target is opened and validated before it replaces the current one; a broken one is refused,
 * reported once, and the current snapshot keeps serving. Requests read `current` once and keep that object, so
 * in-flight requests finish on the snapshot they started on.
 */
export class SnapshotSource {
  readonly path: string;
  private snapshot: Snapshot | null = null;
  private currentKey: string | null = null;
  private refusedKey: string | null = null;
  private running: Promise<CheckResult> | null = null;
  private again = false;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly options: SnapshotSourceOptions;

  constructor(path: string, options: SnapshotSourceOptions = {}) {
    this.path = resolve(path);
    this.options = options;
  }

  /** The snapshot serving now, or null when none valid has been found. */
  get current(): Snapshot | null {
    return this.snapshot;
  }

  /** Loads the snapshot the path points at now, then starts watching for switches. */
  async start(): Promise<CheckResult> {
    const result = await this.check();
    const pollMs = this.options.pollMs ?? 1000;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.check(), pollMs);
      this.timer.unref();
    }
    if (this.options.watch ?? true) {
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
  check(): Promise<CheckResult> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<CheckResult> => {
      let result: CheckResult;
      do {
        this.again = false;
        result = await this.checkOnce();
      } while (this.again);
      return result;
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
  }

  private async checkOnce(): Promise<CheckResult> {
    const target = await realpath(this.path).catch(() => null);
    if (target === null) return 'missing';
    // The manifest's inode and time tell a rewritten plain directory from the same one, at the cost of one stat.
    const st = await stat(join(target, LAYOUT.manifest)).catch(() => null);
    const key = `${target}\0${st ? `${st.ino}:${st.mtimeMs}:${st.size}` : 'none'}`;
    if (key === this.currentKey) return 'unchanged';
    if (key === this.refusedKey) return 'refused';
    try {
      const next = await Snapshot.open(target, this.options.snapshot);
      if (this.options.prepare) {
        await this.options.prepare(next).catch((err: unknown) => this.options.onPrepareError?.(next, err instanceof Error ? err : new Error(String(err))));
      }
      const previous = this.snapshot;
      this.snapshot = next;
      this.currentKey = key;
      this.refusedKey = null;
      this.options.onSwitch?.(next, previous);
      return 'switched';
    } catch (err) {
      this.refusedKey = key;
      this.options.onRefuse?.(target, err instanceof Error ? err : new Error(String(err)));
      return 'refused';
    }
  }
}
