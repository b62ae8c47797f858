import { readFile } from 'node:fs/promises';
import { OTHER_LINK, parseSyncState, type SyncStatus } from '../contract/sync-status.ts';

export type SyncStateReaderOptions = {
  /** How often the file is read again, in milliseconds; 0 turns polling off. */
  pollMs: number;
  onError?: (message: string) => void;
  /** The snapshot link served, as an absolute path: a state that names another link is not this server's. */
  snapshot?: string;
};

/** Reads the sync state file now and then; a missing file means no sync has run, which is not an error. */
export class SyncStateReader {
  readonly path: string;
  private state: SyncStatus | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastError: string | null = null;
  private readonly options: SyncStateReaderOptions;

  constructor(path: string, options: SyncStateReaderOptions) {
    this.path = path;
    this.options = options;
  }

  get current(): SyncStatus | null {
    return this.state;
  }

  async start(): Promise<void> {
    await this.refresh();
    const pollMs = this.options.pollMs;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.refresh(), pollMs);
      this.timer.unref();
    }
  }

  async refresh(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.report(`cannot read ${this.path}: ${(err as Error).message}`);
      this.state = null;
      return;
    }
    const parsed = parseSyncState(text, this.options.snapshot);
    if (typeof parsed === 'string') {
      // Keep what was read last: a file caught half-written should not flip the answers for a few seconds. A state
      // of another link is not this server's at all.
      this.report(`ignoring ${this.path}: ${parsed}`);
      if (parsed.startsWith(OTHER_LINK)) this.state = null;
      return;
    }
    this.lastError = null;
    this.state = parsed;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private report(message: string): void {
    if (message === this.lastError) return;
    this.lastError = message;
    this.options.onError?.(message);
  }
}
