import type { DetailInput } from '../contract/index.ts';
import { ApiError } from './errors.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

/** device-510k.detail: one clearance by its K number, its bytes cut from its shard and checked against the table. */
export async function detail(input: DetailInput, ctx: OperationContext): Promise<OperationResult<DataOf<'device-510k.detail'>>> {
  const record = await ctx.snapshot.recordJson(input.id);
  if (!record) throw new ApiError('record_not_found', `No 510(k) clearance ${input.id} in this snapshot.`);
  return { data: JsonBytes.join('{"record":', [record], '}') };
}
