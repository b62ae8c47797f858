import { classificationOf, type ClassificationInput } from '../contract/index.ts';
import { ApiError } from '../server/errors.ts';
import type { OperationContext, OperationResult } from './index.ts';

/**
 * device-510k.classification. The product-code shards hold every code of the classification file and every code
 * seen on a clearance (the latter with null members), so one lookup answers both cases of CONTRACT.md section 5.
 */
export async function classification(input: ClassificationInput, ctx: OperationContext): Promise<OperationResult> {
  const entry = await ctx.snapshot.getProductCode(input.productCode);
  if (!entry) {
    throw new ApiError(
      'product_code_not_found',
      `No product code ${input.productCode} in the classification file or on any clearance in this snapshot.`,
    );
  }
  return { data: classificationOf(entry) };
}
