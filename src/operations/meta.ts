import type { MetaInput } from '../contract/index.ts';
import type { OperationContext, OperationResult } from './index.ts';

/** device-510k.meta: the build wrote the whole answer; the snapshot parsed it once when it was opened. */
export async function meta(_input: MetaInput, ctx: OperationContext): Promise<OperationResult> {
  return { data: ctx.snapshot.meta };
}
