import type { z } from 'zod';
import { OPERATIONS, type Facet, type OperationName, type Page } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { CursorCodec } from '../server/cursor.ts';
import { catalog, prepareCatalog } from './catalog.ts';
import { classification } from './classification.ts';
import { detail } from './detail.ts';
import { meta } from './meta.ts';
import { search } from './search.ts';
import { topProductCodes } from './top-product-codes.ts';

/** What every operation gets besides its input: the snapshot the request started on, and the time of the answer. */
export type OperationContext = {
  snapshot: Snapshot;
  servedAt: Date;
  cursors: CursorCodec;
};

/** `data` goes into the envelope as it is; `warnings` are added to `sourceState.warnings`. */
export type OperationResult = {
  data: unknown;
  page?: Page;
  facets?: Facet[];
  warnings?: string[];
};

export type OperationHandler<I> = (input: I, ctx: OperationContext) => Promise<OperationResult>;

/** Checks that need no snapshot (a cursor's MAC) run in `prepare`, before the server looks for a snapshot. */
export type PrepareContext = { cursors: CursorCodec };

export type Operation<S extends z.ZodType = z.ZodType, P = z.output<S>> = {
  input: S;
  prepare?: (input: z.output<S>, ctx: PrepareContext) => P;
  handler: OperationHandler<P>;
};

export type OperationRegistry = { [N in OperationName]: Operation };

const define = <S extends z.ZodType, P = z.output<S>>(op: Operation<S, P>): Operation =>
  op as unknown as Operation;

/**
 * Operation name → input schema (from the contract) and handler. Async so that an operation may one day load
 * something first; none does now. Search answers 503 by throwing SearchUnavailable when a snapshot has no usable index.
 */
export async function loadOperations(): Promise<OperationRegistry> {
  return {
    'device-510k.search': define({ input: OPERATIONS['device-510k.search'], handler: search }),
    'device-510k.detail': define({ input: OPERATIONS['device-510k.detail'], handler: detail }),
    'device-510k.classification': define({ input: OPERATIONS['device-510k.classification'], handler: classification }),
    'device-510k.top-product-codes': define({ input: OPERATIONS['device-510k.top-product-codes'], handler: topProductCodes }),
    'device-510k.catalog': define({ input: OPERATIONS['device-510k.catalog'], prepare: prepareCatalog, handler: catalog }),
    'device-510k.meta': define({ input: OPERATIONS['device-510k.meta'], handler: meta }),
  };
}

export { catalog, prepareCatalog } from './catalog.ts';
export { classification } from './classification.ts';
export { detail } from './detail.ts';
export { meta } from './meta.ts';
export { search, warmSearch } from './search.ts';
export { topProductCodes } from './top-product-codes.ts';
