import type { MetaInput } from '../contract/index.ts';
import { JsonBytes, type DataOf, type OperationContext, type OperationResult } from './types.ts';

/** device-510k.meta: the build wrote the whole answer; it is sent as the file's bytes. */
export function meta(_input: MetaInput, ctx: OperationContext): OperationResult<DataOf<'device-510k.meta'>> {
  return { data: new JsonBytes(ctx.snapshot.metaJson) };
}
