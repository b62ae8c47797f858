import { z } from 'zod';

export const ProductCode = z.string().regex(/^[A-Z]{3}$/);

/** data of device-510k.classification (docs/contract.md section 5). */
export const Classification = z.strictObject({
  productCode: ProductCode,
  deviceType: z.string().nullable(),
  deviceClass: z.string().nullable(),
  regulationNumber: z.string().nullable(),
  medicalSpecialty: z.string().nullable(),
  reviewPanel: z.string().nullable(),
  definition: z.string().nullable(),
  // Members after `definition` extend the contract's classification (docs/contract.md): foiclass.txt's flags and
  // codes, named where FDA documents the code.
  submissionType: z.string().nullable(),
  unclassifiedReason: z.string().nullable(),
  gmpExempt: z.boolean().nullable(),
  thirdPartyEligible: z.boolean().nullable(),
  thirdPartyReviewCode: z.string().nullable(),
  implant: z.boolean().nullable(),
  lifeSustaining: z.boolean().nullable(),
  summaryMalfunctionReporting: z.string().nullable(),
  physicalState: z.string().nullable(),
  technicalMethod: z.string().nullable(),
  targetArea: z.string().nullable(),
});
export type Classification = z.infer<typeof Classification>;

/** One entry of the product-code catalog: the classification plus how many clearances carry the code. */
export const ProductCodeEntry = z.strictObject({
  ...Classification.shape,
  clearanceCount: z.int().min(0),
});
export type ProductCodeEntry = z.infer<typeof ProductCodeEntry>;

export const ProductCodeCount = z.strictObject({
  code: ProductCode,
  count: z.int().min(0),
});
export type ProductCodeCount = z.infer<typeof ProductCodeCount>;

export function classificationOf(entry: ProductCodeEntry): Classification {
  const { clearanceCount: _count, ...classification } = entry;
  return classification;
}
