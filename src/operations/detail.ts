import type { DetailInput } from '../contract/index.ts';
import { ApiError } from '../server/errors.ts';
import type { OperationContext, OperationResult } from './index.ts';

/** device-510k.detail: one clearance by its K number, from the record shard its first five characters name. */
export async function detail(input: DetailInput, ctx: OperationContext): Promise<OperationResult> {
  const record = await ctx.snapshot.getRecord(input.id);
  if (!record) throw new ApiError('record_not_found', `No 510(k) clearance ${input.id} in this snapshot.`);
  return { data: { record } };
}
