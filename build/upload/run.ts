import pLimit from 'p-limit';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import type { Destination } from './destinations.ts';
import type { Plan } from './plan.ts';

/**
 * A publication in the order that keeps readers whole (docs/deploy.md): every file of the snapshot but its manifest,
 * only those the live manifest does not already list with the same sha256; then `manifest.json`, so a reader that
 * gets the new manifest finds every file it names; then the page. Nothing is deleted unless asked (`prune`): readers
 * of the old manifest may still be fetching its files; a later run with `prune` removes the snapshot's files that
 * the new manifest no longer has.
 */
export type PublishOptions = {
  plan: Plan;
  destination: Destination;
  concurrency?: number;
  prune?: boolean;
  log?: (line: string) => void;
};

export type PublishResult = {
  snapshotId: string;
  /** Files sent (the manifest and the page's included), and their bytes. */
  sent: number;
  sentBytes: number;
  /** Snapshot files the live manifest already listed with the same sha256. */
  unchanged: number;
  /** Keys removed under the snapshot's prefix (with `prune`). */
  pruned: number;
  /** What the live manifest was when the run began: its snapshot id, or null for none. */
  previous: string | null;
};

export async function publish(options: PublishOptions): Promise<PublishResult> {
  const { plan, destination } = options;
  const log = options.log ?? (() => {});
  const limit = pLimit(options.concurrency ?? 8);
  const prefix = plan.manifest.key.slice(0, plan.manifest.key.length - LAYOUT.manifest.length);

  const liveBytes = await destination.read(plan.manifest.key);
  let live: Manifest | null = null;
  if (liveBytes !== null) {
    const parsed = Manifest.safeParse((() => {
      try {
        return JSON.parse(liveBytes.toString('utf8'));
      } catch {
        return null;
      }
    })());
    if (parsed.success) live = parsed.data;
    else log(`the live ${plan.manifest.key} is not a manifest this version reads: every file is sent`);
  }
  const same = new Set((live?.files ?? []).map((f) => `${f.path}\t${f.sha256}\t${f.bytes}`));
  const current = (item: Plan['snapshot'][number]) => item.entry !== null && same.has(`${item.entry.path}\t${item.entry.sha256}\t${item.entry.bytes}`);

  let sent = 0;
  let sentBytes = 0;
  let unchanged = 0;
  const send = async (item: Plan['snapshot'][number]) => {
    await destination.put(item);
    sent++;
    sentBytes += item.bytes;
  };
  log(`publishing snapshot ${plan.snapshotId} to ${destination.name}${live ? ` (live: ${live.snapshotId})` : ''}`);
  await Promise.all(
    plan.snapshot.map((item) =>
      limit(async () => {
        if (current(item) && (await destination.holds(item))) unchanged++;
        else await send(item);
      }),
    ),
  );
  await send(plan.manifest);
  log(`snapshot: ${sent - 1} files sent, ${unchanged} unchanged; manifest.json sent last`);
  const before = sent;
  await Promise.all(plan.page.map((item) => limit(() => send(item))));
  if (plan.page.length > 0) log(`page: ${sent - before} files sent`);

  let pruned = 0;
  if (options.prune) {
    const keep = new Set([...plan.snapshot.map((i) => i.key), plan.manifest.key]);
    const stale = (await destination.list(prefix)).filter((key) => !keep.has(key));
    await Promise.all(stale.map((key) => limit(() => destination.remove(key))));
    pruned = stale.length;
    log(`pruned ${pruned} files the new manifest does not list`);
  }
  return { snapshotId: plan.snapshotId, sent, sentBytes, unchanged, pruned, previous: live?.snapshotId ?? null };
}
