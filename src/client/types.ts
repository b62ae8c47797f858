import type { z } from 'zod';
import type { OPERATIONS, ResponseSchemas } from '../contract/index.ts';

/**
 * The data types of the client's API, each a plain type. The client package's `types.d.ts` is this module with
 * every type written out in full (build/client/types.ts), so a project that installs the client needs no zod: keep
 * every export here a non-generic alias. Generic helpers over these go in index.ts.
 */

export type {
  CatalogKind,
  Classification,
  ClearanceRecord,
  ErrorBody,
  ErrorCode,
  ErrorDetail,
  Manifest,
  OperationName,
  Page,
  ProductCodeEntry,
  SourceState,
} from '../contract/index.ts';

/** Each operation's input, as the server accepts it (before its normalization: `"k123456"` is a valid `id`). */
export type Inputs = { [N in keyof typeof OPERATIONS]: z.input<(typeof OPERATIONS)[N]> };
/** Each operation's whole answer as sent: `data`, `sourceState`, and `page`/`facets` where the operation has them. */
export type Answers = { [N in keyof typeof ResponseSchemas]: z.output<(typeof ResponseSchemas)[N]> };
