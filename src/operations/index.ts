import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { OPERATIONS, type Facet, type OperationName, type Page } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import { SearchUnavailable } from '../server/errors.ts';
import type { CursorCodec } from '../server/cursor.ts';
import { catalog, prepareCatalog } from './catalog.ts';
import { classification } from './classification.ts';
import { detail } from './detail.ts';
import { meta } from './meta.ts';
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

const searchUnavailable: OperationHandler<unknown> = async () => {
  throw new SearchUnavailable();
};

/** The search module, when it is part of this checkout; loaded by URL so that the server runs without it. */
type SearchModule = { search: OperationHandler<unknown> };
const SEARCH_MODULE = new URL('./search.ts', import.meta.url).href;

export async function loadSearch(onError: (message: string) => void, moduleUrl = SEARCH_MODULE): Promise<OperationHandler<unknown>> {
  let mod: Partial<SearchModule>;
  try {
    mod = (await import(moduleUrl)) as Partial<SearchModule>;
  } catch (err) {
    // Only the module itself being absent is expected; a missing import inside it, or a syntax error, is a bug.
    const missing = /Cannot find module '([^']+)'/.exec(String((err as Error).message))?.[1];
    const absent = (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && (missing === moduleUrl || missing === fileURLToPath(moduleUrl));
    if (!absent) {
      onError(`search is disabled: loading its module failed: ${(err as Error).stack ?? String(err)}`);
    }
    return searchUnavailable;
  }
  if (typeof mod.search !== 'function') {
    onError('search is disabled: its module exports no `search` function');
    return searchUnavailable;
  }
  return mod.search;
}

/** Operation name → input schema (from the contract) and handler. */
export async function loadOperations(options: { onError?: (message: string) => void } = {}): Promise<OperationRegistry> {
  const search = await loadSearch(options.onError ?? (() => {}));
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
export { topProductCodes } from './top-product-codes.ts';
