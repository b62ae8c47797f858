import type { Manifest, SourceState } from '../contract/index.ts';
import type { SyncStatus } from '../contract/sync-status.ts';
import { isoTime } from '../utils/iso-time.ts';
import { DEFAULT_FRESHNESS_MAX_AGE_HOURS } from './defaults.ts';

/** docs/contract.md section 7, as a pure function of what is loaded, what the sync recorded, and the time. */
export type SourceStateInputs = {
  manifest: Manifest | null;
  sync: SyncStatus | null;
  now: Date;
  maxAgeHours: number;
  /** Sentences the operation adds (an old cursor, for example). */
  warnings?: readonly string[];
};

const HOUR_MS = 3_600_000;

function newest(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** The sync's last attempt failed, and no success came after it. */
export function failedLastSync(sync: SyncStatus | null): { at: string; reason: string } | null {
  const failure = sync?.lastFailure;
  if (!sync || !failure) return null;
  const at = Date.parse(failure.at);
  if (sync.lastAttemptAt && Date.parse(sync.lastAttemptAt) > at) return null;
  if (sync.lastSuccessfulSyncAt && Date.parse(sync.lastSuccessfulSyncAt) > at) return null;
  return failure;
}

/** Every source came from the repository's bundled data folder. */
const fromBundledFiles = (manifest: Manifest): boolean =>
  manifest.sources.length > 0 && manifest.sources.every((s) => s.name.startsWith('data/fda/'));

function hoursAgo(ms: number): string {
  const hours = ms / HOUR_MS;
  if (hours < 1) return `${Math.max(0, Math.round(ms / 60_000))} minutes ago`;
  return `${Math.round(hours)} hours ago`;
}

const sentence = (s: string): string => s.trim().replace(/[.!?]*$/, '');

/**
 * Whether data last synced at `lastSuccessfulSyncAt` is current at `nowMs` (synced within `maxAgeHours`), stale, or
 * unknown (never synced). The static page reports the same (bundled for it by build/page/bundle.ts).
 */
export function freshnessOf(lastSuccessfulSyncAt: string | null, nowMs: number, maxAgeHours: number = DEFAULT_FRESHNESS_MAX_AGE_HOURS): SourceState['freshness'] {
  if (lastSuccessfulSyncAt === null) return 'unknown';
  return nowMs - Date.parse(lastSuccessfulSyncAt) <= maxAgeHours * HOUR_MS ? 'current' : 'stale';
}

export function sourceStateOf(inputs: SourceStateInputs): SourceState {
  const { manifest, sync, now, maxAgeHours } = inputs;
  const warnings: string[] = [];
  const failure = failedLastSync(sync);
  const servedAt = now.toISOString();

  if (!manifest) {
    if (failure) warnings.push(`The last sync, at ${failure.at}, failed: ${sentence(failure.reason)}. No snapshot is loaded.`);
    warnings.push(...(inputs.warnings ?? []));
    return {
      mode: 'corpus',
      availability: 'unavailable',
      freshness: 'unknown',
      freshnessEvidence: 'no valid snapshot is loaded',
      sourceRevision: null,
      snapshotGeneratedAt: null,
      lastSuccessfulSyncAt: null,
      servedAt,
      warnings,
    };
  }

  const lastSync = newest(manifest.lastSuccessfulSyncAt, sync?.lastSuccessfulSyncAt);
  const ageMs = lastSync === null ? null : now.getTime() - Date.parse(lastSync);
  const freshness = freshnessOf(lastSync, now.getTime(), maxAgeHours);
  const newestDecision = manifest.decisionDateMax ? `newest decision ${manifest.decisionDateMax}` : 'no decision dates';

  const evidence: string[] = [];
  if (lastSync === null || ageMs === null) {
    evidence.push(fromBundledFiles(manifest) ? 'built from bundled files' : 'built from local files', 'no sync recorded');
  } else {
    evidence.push(`last synced from FDA at ${lastSync} (${hoursAgo(ageMs)}; limit ${maxAgeHours} hours)`);
  }
  if (failure) evidence.push(`last sync attempt failed at ${failure.at}`);
  evidence.push(newestDecision);

  if (freshness === 'stale' && lastSync !== null) {
    warnings.push(`The data was last synced from FDA at ${lastSync}, more than ${maxAgeHours} hours ago, so recent clearances may be missing.`);
  }
  if (failure) {
    warnings.push(`The last sync, at ${failure.at}, failed: ${sentence(failure.reason)}. Serving the snapshot built at ${manifest.generatedAt}.`);
  }
  warnings.push(...(inputs.warnings ?? []));

  return {
    mode: 'corpus',
    availability: 'available',
    freshness,
    freshnessEvidence: evidence.join('; '),
    sourceRevision: manifest.sourceRevision,
    snapshotGeneratedAt: manifest.generatedAt,
    lastSuccessfulSyncAt: lastSync,
    servedAt,
    warnings,
  };
}

/**
 * What in a source state depends on the time of the answer besides `servedAt`: whether the last sync is within the
 * maximum age, and how long ago it was in words. Two times with the same key give the same state but for `servedAt`.
 */
function timeKey(inputs: SourceStateInputs): string {
  const { manifest, sync, now, maxAgeHours } = inputs;
  if (!manifest) return '';
  const lastSync = newest(manifest.lastSuccessfulSyncAt, sync?.lastSuccessfulSyncAt);
  if (lastSync === null) return '';
  const ageMs = now.getTime() - Date.parse(lastSync);
  return `${ageMs <= maxAgeHours * HOUR_MS}|${hoursAgo(ageMs)}`;
}

const SERVED_AT_MARK = '\u0000servedAt\u0000';

/**
 * The source state as JSON text, serialized once per snapshot, sync state and time key, with only `servedAt` written
 * per answer (answers carry it, and serializing the whole state each time cost more than the rest of a lookup).
 * Warnings an operation adds make a state of their own, serialized in full.
 */
export class SourceStateJson {
  private key: { manifest: Manifest | null; sync: SyncStatus | null; time: string } | null = null;
  private parts: [string, string] = ['', ''];

  json(inputs: SourceStateInputs): string {
    const servedAt = isoTime(inputs.now.getTime());
    if (inputs.warnings && inputs.warnings.length > 0) return JSON.stringify(sourceStateOf(inputs));
    const time = timeKey(inputs);
    const key = this.key;
    if (!key || key.manifest !== inputs.manifest || key.sync !== inputs.sync || key.time !== time) {
      const text = JSON.stringify({ ...sourceStateOf(inputs), servedAt: SERVED_AT_MARK });
      const mark = JSON.stringify(SERVED_AT_MARK);
      const at = text.indexOf(mark);
      this.parts = [text.slice(0, at), text.slice(at + mark.length)];
      this.key = { manifest: inputs.manifest, sync: inputs.sync, time };
    }
    return `${this.parts[0]}"${servedAt}"${this.parts[1]}`;
  }
}
