import type { OperationName } from './operations.ts';

/**
 * Validators for the common, valid inputs of each operation, a few comparisons each: they give exactly what the
 * operation's zod schema would give, or undefined when they are not sure, and then the schema decides (it alone words
 * the errors). A test checks, over generated inputs, that whenever these accept, the schema accepts with the same value.
 */
type Fast = (input: Record<string, unknown>) => unknown;

const K_NUMBER = /^\s*[Kk]\d{6}\s*$/;
const PRODUCT_CODE = /^[A-Za-z]{3}$/;
const DEVICE_NUMBER = /^\s*(?:[Kk]|[Dd][Ee][Nn])\d{6}\s*$/;
const LINEAGE_MEMBERS = ['id', 'direction', 'depth', 'kinds', 'limit', 'cursor'] as const;

/** True when `input` has exactly these members. */
function hasExactly(input: Record<string, unknown>, names: readonly string[]): boolean {
  let n = 0;
  for (const key in input) {
    if (!Object.hasOwn(input, key)) continue;
    if (!names.includes(key)) return false;
    n++;
  }
  return n === names.length;
}

const intIn = (v: unknown, min: number, max: number): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const yearOrNull = (v: unknown): v is number | null => v === null || intIn(v, 1900, 9999);

const SEARCH_MEMBERS = ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo', 'page', 'pageSize'] as const;

export const FAST_INPUTS: Readonly<Record<OperationName, Fast>> = {
  'device-510k.detail': (input) => {
    const { id } = input;
    if (!hasExactly(input, ['id']) || typeof id !== 'string' || !K_NUMBER.test(id)) return undefined;
    return { id: id.trim().toUpperCase() };
  },
  'device-510k.classification': (input) => {
    const { productCode } = input;
    if (!hasExactly(input, ['productCode']) || typeof productCode !== 'string' || !PRODUCT_CODE.test(productCode)) return undefined;
    return { productCode: productCode.toUpperCase() };
  },
  'device-510k.top-product-codes': (input) => {
    const { limit } = input;
    return hasExactly(input, ['limit']) && intIn(limit, 1, 100) ? { limit } : undefined;
  },
  'device-510k.catalog': (input) => {
    const { kind, limit, cursor } = input;
    if (!hasExactly(input, ['kind', 'limit', 'cursor']) || (kind !== 'clearance' && kind !== 'product-code')) return undefined;
    if (!intIn(limit, 1, 500) || (cursor !== null && typeof cursor !== 'string')) return undefined;
    return { kind, limit, cursor };
  },
  'device-510k.meta': (input) => (hasExactly(input, []) ? {} : undefined),
  'device-510k.lineage': (input) => {
    const { id, direction, depth, kinds, limit, cursor } = input;
    if (!hasExactly(input, LINEAGE_MEMBERS) || typeof id !== 'string' || !DEVICE_NUMBER.test(id)) return undefined;
    if (direction !== 'predicates' && direction !== 'descendants') return undefined;
    if (!(depth === null || intIn(depth, 1, 50)) || !intIn(limit, 1, 500) || (cursor !== null && typeof cursor !== 'string')) return undefined;
    // A list of kinds is left to the schema, which words its errors.
    if (kinds !== null) return undefined;
    return { id: id.trim().toUpperCase(), direction, depth, kinds, limit, cursor };
  },
  'device-510k.search': (input) => {
    if (!hasExactly(input, SEARCH_MEMBERS)) return undefined;
    const { query, applicant, productCode, yearFrom, yearTo, page, pageSize } = input;
    // At most 2,048 UTF-16 units is at most 2,048 code points; longer strings are left to the schema's count.
    if (typeof query !== 'string' || query.length > 2048) return undefined;
    // A qualifier or a quote may break the query grammar, which the schema words.
    if (query.includes(':') || query.includes('"')) return undefined;
    let trimmed: string | null = null;
    if (applicant !== null) {
      if (typeof applicant !== 'string') return undefined;
      trimmed = applicant.trim();
      if (trimmed.length < 1 || trimmed.length > 256) return undefined;
    }
    if (productCode !== null && (typeof productCode !== 'string' || !PRODUCT_CODE.test(productCode))) return undefined;
    if (!yearOrNull(yearFrom) || !yearOrNull(yearTo) || (yearFrom !== null && yearTo !== null && yearTo < yearFrom)) return undefined;
    if (!intIn(page, 1, Number.MAX_SAFE_INTEGER) || !intIn(pageSize, 1, 50)) return undefined;
    return { query, applicant: trimmed, productCode: productCode === null ? null : productCode.toUpperCase(), yearFrom, yearTo, page, pageSize };
  },
};
