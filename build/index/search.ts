import type { ClearanceRecord } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * Writes the API's search index under `search/` of the snapshot being built.
 * `records` are every clearance in kNumber ascending order; `deviceTypes` maps a product code to its device type.
 * PLACEHOLDER: the search index is built in its own change (issue: search); until then the build writes none.
 */
export async function writeSearchIndex(
  _records: readonly ClearanceRecord[],
  _deviceTypes: ReadonlyMap<string, string | null>,
  _writer: SnapshotWriter,
): Promise<void> {}
