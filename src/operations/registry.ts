import { OPERATIONS, type OperationName } from '../contract/index.ts';
import { catalog, prepareCatalog } from './catalog.ts';
import { classification } from './classification.ts';
import { detail } from './detail.ts';
import { lineage, prepareLineage } from './lineage.ts';
import { meta } from './meta.ts';
import { prepareSearch, search } from './search.ts';
import { topProductCodes } from './top-product-codes.ts';
import type { DataOf, Operation } from './types.ts';

/** A registry as the server uses it: looked up by a name known only at run time. */
export type OperationRegistry = { readonly [N in OperationName]: Operation };

/** Each operation checked against its own input schema and the `data` type of its response schema. */
type Checked = { readonly [N in OperationName]: Operation<(typeof OPERATIONS)[N], any, DataOf<N>> };

/** Operation name → input schema (from the contract), optional `prepare`, and handler. */
const checked = {
  'device-510k.search': { input: OPERATIONS['device-510k.search'], prepare: prepareSearch, handler: search, cacheable: true },
  'device-510k.detail': { input: OPERATIONS['device-510k.detail'], handler: detail },
  'device-510k.classification': { input: OPERATIONS['device-510k.classification'], handler: classification },
  'device-510k.top-product-codes': { input: OPERATIONS['device-510k.top-product-codes'], handler: topProductCodes },
  'device-510k.catalog': { input: OPERATIONS['device-510k.catalog'], prepare: prepareCatalog, handler: catalog },
  'device-510k.meta': { input: OPERATIONS['device-510k.meta'], handler: meta },
  'device-510k.lineage': { input: OPERATIONS['device-510k.lineage'], prepare: prepareLineage, handler: lineage },
} as const satisfies Checked;

/** The registry for lookups by name: the types were checked above, and a name chosen at run time cannot keep them. */
export const OPERATION_REGISTRY: OperationRegistry = checked as unknown as OperationRegistry;
