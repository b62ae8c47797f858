import type { ProductCodeEntry } from '../contract/classification.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/**
 * Every product code's catalog entry (the classification plus its clearance count), read once per snapshot from the
 * product-code shards: a few thousand entries, the `openfda` block of every 510(k) record and the whole of the
 * classification endpoint. Entries come in code order, as the shards hold them.
 */
export type Catalog = { entries: readonly ProductCodeEntry[]; byCode: ReadonlyMap<string, ProductCodeEntry> };

const catalogs = new WeakMap<Snapshot, Promise<Catalog>>();
const decoder = new TextDecoder();

export function catalogOf(snapshot: Snapshot): Promise<Catalog> {
  let known = catalogs.get(snapshot);
  if (!known) {
    known = readCatalog(snapshot);
    catalogs.set(snapshot, known);
    known.catch(() => {
      if (catalogs.get(snapshot) === known) catalogs.delete(snapshot);
    });
  }
  return known;
}

async function readCatalog(snapshot: Snapshot): Promise<Catalog> {
  const entries: ProductCodeEntry[] = [];
  for (let position = 0; position < snapshot.productCodeIndex.shards.length; position++) {
    const lines = await snapshot.shardLines('product-code', position);
    for (let i = 0; i < lines.starts.length; i++) {
      entries.push(JSON.parse(decoder.decode(lines.bytes.subarray(lines.starts[i], lines.ends[i]))) as ProductCodeEntry);
    }
  }
  entries.sort((a, b) => (a.productCode < b.productCode ? -1 : a.productCode > b.productCode ? 1 : 0));
  return { entries, byCode: new Map(entries.map((e) => [e.productCode, e])) };
}
