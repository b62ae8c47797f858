import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * What the server needs from the nightly sync's state file. The sync owns the file's full schema; the server
 * reads only these members and ignores the rest, so either side can grow without breaking the other.
 */
const Timestamp = z.iso.datetime({ offset: true });
const SyncStateFile = z.looseObject({
  snapshot: z.string().optional(),
  lastAttemptAt: Timestamp.nullable().optional(),
  lastSuccessfulSyncAt: Timestamp.nullable().optional(),
  lastFailure: z.looseObject({ at: Timestamp, reason: z.string() }).nullable().optional(),
});

export type SyncStatus = {
  lastAttemptAt: string | null;
  lastSuccessfulSyncAt: string | null;
  lastFailure: { at: string; reason: string } | null;
};

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

const OTHER_LINK = 'it is the sync state of';

/** The state in a file's text, or a sentence saying why it is not usable (also: it is the state of another link). */
export function parseSyncState(text: string, snapshot?: string): SyncStatus | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  const parsed = SyncStateFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
  }
  const d = parsed.data;
  if (snapshot !== undefined && d.snapshot !== undefined && d.snapshot !== snapshot) return `${OTHER_LINK} ${d.snapshot}, not of ${snapshot}`;
  // Offsets are allowed in the file; the server reports UTC, as the contract's timestamps are.
  const utc = (t: string | null | undefined): string | null => (t ? new Date(t).toISOString() : null);
  return {
    lastAttemptAt: utc(d.lastAttemptAt),
    lastSuccessfulSyncAt: utc(d.lastSuccessfulSyncAt),
    lastFailure: d.lastFailure ? { at: utc(d.lastFailure.at) as string, reason: d.lastFailure.reason } : null,
  };
}
