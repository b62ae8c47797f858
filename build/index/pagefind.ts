import type { ClearanceRecord } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * Writes the browser page's Pagefind index under `pagefind/` of the snapshot being built, then adopts its files
 * into the manifest with `writer.adoptDirectory('pagefind')`.
 * PLACEHOLDER: built in its own change (issue: search, browser page); until then the build writes none.
 */
export async function writePagefindIndex(
  _records: readonly ClearanceRecord[],
  _deviceTypes: ReadonlyMap<string, string | null>,
  _writer: SnapshotWriter,
): Promise<void> {}
