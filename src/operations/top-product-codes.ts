import type { TopProductCodesInput } from '../contract/index.ts';
import type { DataOf, OperationContext, OperationResult } from './types.ts';

/** device-510k.top-product-codes: the head of the precomputed list (count descending, then code ascending). */
export async function topProductCodes(
  input: TopProductCodesInput,
  ctx: OperationContext,
): Promise<OperationResult<DataOf<'device-510k.top-product-codes'>>> {
  return { data: { codes: ctx.snapshot.topProductCodes.codes.slice(0, input.limit) } };
}
