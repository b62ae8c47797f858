import { z } from 'zod';

/** Input schemas of the six operations (spec "Endpoints" and CONTRACT.md section 3). */

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const int = (min: number, max?: number) => {
  let schema = z.int({
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be an integer'),
  });
  schema = schema.min(min, { error: `must be at least ${min}` });
  if (max !== undefined) schema = schema.max(max, { error: `must be at most ${max}` });
  return schema;
};

const required = (what: string) => ({
  error: (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

/** Three ASCII letters, case-insensitive; normalized to upper case. */
export const ProductCodeInput = z
  .string(required('a string'))
  .regex(/^[A-Za-z]{3}$/, { error: 'must be three letters' })
  .transform((s) => s.toUpperCase());

/** K followed by six digits, case-insensitive, surrounding spaces ignored. */
export const KNumberInput = z
  .string(required('a string'))
  .regex(/^\s*[Kk]\d{6}\s*$/, { error: 'must be K followed by six digits' })
  .transform((s) => s.trim().toUpperCase());

const Year = int(1900, 9999).nullable();

export const SearchInput = z
  .strictObject({
    query: z
      .string(required('a string'))
      .refine((s) => codePoints(s) <= 2048, { error: 'must be at most 2048 characters' }),
    applicant: z
      .string(required('a string or null'))
      .transform((s) => s.trim())
      .refine((s) => s.length >= 1, { error: 'must not be empty' })
      .refine((s) => codePoints(s) <= 256, { error: 'must be at most 256 characters' })
      .nullable(),
    productCode: ProductCodeInput.nullable(),
    yearFrom: Year,
    yearTo: Year,
    page: int(1),
    pageSize: int(1, 50),
  })
  .superRefine((input, ctx) => {
    if (input.yearFrom !== null && input.yearTo !== null && input.yearTo < input.yearFrom) {
      ctx.addIssue({ code: 'custom', path: ['yearTo'], message: 'must not be before yearFrom' });
    }
  });
export type SearchInput = z.output<typeof SearchInput>;

export const DetailInput = z.strictObject({ id: KNumberInput });
export type DetailInput = z.output<typeof DetailInput>;

export const ClassificationInput = z.strictObject({ productCode: ProductCodeInput });
export type ClassificationInput = z.output<typeof ClassificationInput>;

export const TopProductCodesInput = z.strictObject({ limit: int(1, 100) });
export type TopProductCodesInput = z.output<typeof TopProductCodesInput>;

export const CatalogKind = z.enum(['clearance', 'product-code'], {
  error: (issue) => (issue.input === undefined ? 'is required' : 'must be "clearance" or "product-code"'),
});
export type CatalogKind = z.infer<typeof CatalogKind>;

export const CatalogInput = z.strictObject({
  kind: CatalogKind,
  limit: int(1, 500),
  cursor: z.string(required('a string or null')).nullable(),
});
export type CatalogInput = z.output<typeof CatalogInput>;

export const MetaInput = z.strictObject({});
export type MetaInput = z.output<typeof MetaInput>;

export const OPERATIONS = {
  'device-510k.search': SearchInput,
  'device-510k.detail': DetailInput,
  'device-510k.classification': ClassificationInput,
  'device-510k.top-product-codes': TopProductCodesInput,
  'device-510k.catalog': CatalogInput,
  'device-510k.meta': MetaInput,
} as const;
export type OperationName = keyof typeof OPERATIONS;
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

export function isOperationName(value: unknown): value is OperationName {
  return typeof value === 'string' && Object.hasOwn(OPERATIONS, value);
}
