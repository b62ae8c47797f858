import { CLEARANCE_FIELDS, type ClearanceFields } from '../../src/contract/index.ts';

/** An empty value never overrides a non-empty one (docs/contract.md section 4). */
function isEmpty(value: unknown): boolean {
  return value === null || value === '';
}

/** Merges `next` into `base` field by field: the later input wins wherever it has a value. Returns a new object. */
export function mergeFields(base: ClearanceFields, next: ClearanceFields): ClearanceFields {
  const out = { ...base } as Record<string, unknown>;
  for (const field of CLEARANCE_FIELDS) {
    const value = next[field];
    if (!isEmpty(value)) out[field] = value;
  }
  return out as ClearanceFields;
}

export type Origin = { file: string; line: number | null; entry: number | null };

/** Collects rows by K number in source order; the first row of a K number starts its record. */
export class ClearanceMerger {
  private readonly byK = new Map<string, { fields: ClearanceFields; origin: Origin }>();

  /** Returns the origin of the row that started the record when this row was merged into it, else null. */
  add(kNumber: string, fields: ClearanceFields, origin: Origin): Origin | null {
    const existing = this.byK.get(kNumber);
    if (!existing) {
      this.byK.set(kNumber, { fields, origin });
      return null;
    }
    existing.fields = mergeFields(existing.fields, fields);
    return existing.origin;
  }

  get size(): number {
    return this.byK.size;
  }

  /** Every record, kNumber ascending. */
  sorted(): [string, ClearanceFields][] {
    const keys = [...this.byK.keys()].sort();
    return keys.map((k) => [k, (this.byK.get(k) as { fields: ClearanceFields }).fields]);
  }
}
