export * from './contract/index.ts';
export * from './snapshot/index.ts';
export { createApp, type App, type AppOptions } from './server/app.ts';
export { configFromEnv, type ListenConfig, type ServerConfig } from './server/config.ts';
export { ApiError, SearchUnavailable, errorBody, toApiError } from './server/errors.ts';
export { BUILT_IN_CURSOR_SECRET, CursorCodec, type CursorPayload } from './server/cursor.ts';
export { buildOpenApiDocument } from './server/openapi.ts';
export { sourceStateOf } from './server/source-state.ts';
export { jsonLogger, silentLogger, type Logger, type RequestLine } from './server/log.ts';
export {
  loadOperations,
  type Operation,
  type OperationContext,
  type OperationHandler,
  type OperationRegistry,
  type OperationResult,
} from './operations/index.ts';
