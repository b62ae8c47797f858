import type { ClassificationInput } from '../contract/index.ts';
import { ApiError } from './errors.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

/** The catalog entry's last member, which the classification answer leaves out (build/merge/assemble.ts writes it last). */
const COUNT_TAIL = /,"clearanceCount":\d+\}$/;
const decoder = new TextDecoder();

/**
 * device-510k.classification. The product-code shards hold every code of the classification file and every code
 * seen on a clearance (the latter with null members), so one lookup answers both cases of the contract's section 5.
 * The answer is the entry's bytes without its `clearanceCount`.
 */
export async function classification(
  input: ClassificationInput,
  ctx: OperationContext,
): Promise<OperationResult<DataOf<'device-510k.classification'>>> {
  const entry = await ctx.snapshot.productCodeJson(input.productCode);
  if (!entry) {
    throw new ApiError(
      'product_code_not_found',
      `No product code ${input.productCode} in the classification file or on any clearance in this snapshot.`,
    );
  }
  // The tail is a few bytes; decoding only them keeps the check off the whole entry.
  const tail = decoder.decode(entry.subarray(Math.max(0, entry.length - 40)));
  const match = COUNT_TAIL.exec(tail);
  if (!match) throw new Error(`product code ${input.productCode}'s entry does not end with its clearanceCount`);
  return { data: JsonBytes.join('', [entry.subarray(0, entry.length - match[0].length)], '}') };
}
