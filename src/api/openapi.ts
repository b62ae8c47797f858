import { z } from 'zod';
import {
  ClearanceRecord,
  Classification,
  ErrorBody,
  ErrorDetail,
  ExportInput,
  Facet,
  MetaData,
  OPERATIONS,
  OPERATION_NAMES,
  Page,
  ProductCodeCount,
  ProductCodeEntry,
  RequestedFacet,
  ResponseSchemas,
  SearchStats,
  SourceRef,
  SourceState,
  type OperationName,
} from '../contract/index.ts';
import { MAX_BODY_BYTES } from './body.ts';

/**
 * GET /v1/openapi.json: an OpenAPI 3.1 document generated from the contract's zod schemas, the same ones the server
 * validates requests with and the tests parse answers with, so the document cannot drift from the service.
 */

/** `device-510k.top-product-codes` → `TopProductCodes`, for component names. */
const pascal = (operation: OperationName): string =>
  operation
    .replace(/^device-510k\./, '')
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

export const HealthBody = z.strictObject({
  status: z.enum(['ok', 'unavailable']),
  /** Why no snapshot is serving (only with 503). */
  reason: z.string().optional(),
  sourceState: SourceState,
});

/**
 * The request envelope of one operation. Not strict: the server ignores members besides these three (the contract
 * names no error for them), and the document says what the server does.
 */
export const requestEnvelope = (operation: OperationName) =>
  z.object({ version: z.literal(1), operation: z.literal(operation), input: OPERATIONS[operation] });

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function componentsOf(registry: z.core.$ZodRegistry<{ id: string }>, io: 'input' | 'output'): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  const out: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // Components are fragments of one document: their own $schema and $id would make each a separate resource.
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}

/** The export's query parameters, each with the JSON schema of its value (numbers are sent as digits). */
function exportParameters(): Record<string, unknown>[] {
  return Object.entries(ExportInput.shape).map(([name, schema]) => {
    const { $schema: _s, ...json } = z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    return { name, in: 'query', required: false, schema: json };
  });
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const requests = z.registry<{ id: string }>();
  for (const name of OPERATION_NAMES) {
    requests.add(OPERATIONS[name], { id: `${pascal(name)}Input` });
    requests.add(requestEnvelope(name), { id: `${pascal(name)}Request` });
  }
  const responses = z.registry<{ id: string }>();
  const shared: [z.ZodType, string][] = [
    [ClearanceRecord, 'ClearanceRecord'],
    [SourceRef, 'SourceRef'],
    [SourceState, 'SourceState'],
    [Page, 'Page'],
    [Facet, 'Facet'],
    [RequestedFacet, 'RequestedFacet'],
    [SearchStats, 'SearchStats'],
    [Classification, 'Classification'],
    [ProductCodeEntry, 'ProductCodeEntry'],
    [ProductCodeCount, 'ProductCodeCount'],
    [MetaData, 'MetaData'],
    [ErrorDetail, 'ErrorDetail'],
    [ErrorBody, 'ErrorBody'],
    [HealthBody, 'HealthBody'],
  ];
  for (const [schema, id] of shared) responses.add(schema, { id });
  for (const name of OPERATION_NAMES) responses.add(ResponseSchemas[name], { id: `${pascal(name)}Response` });

  const byOperation = (suffix: string) => ({
    oneOf: OPERATION_NAMES.map((n) => ref(`${pascal(n)}${suffix}`)),
    discriminator: {
      propertyName: 'operation',
      mapping: Object.fromEntries(OPERATION_NAMES.map((n) => [n, `#/components/schemas/${pascal(n)}${suffix}`])),
    },
  });
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  const errorResponse = (description: string) => ({ description, content: json(ref('ErrorBody')) });
  const cors = { 'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' } } };
  // Node's HTTP server answers any path so when a client is too slow (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS).
  const slowClient = { '408': { description: 'The client did not send its whole request in time; the connection is closed.' } };

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'device-510k query service',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      summary: 'Read-only queries over the FDA 510(k) premarket notifications.',
      description:
        'Every query is a POST to /v1/query whose body names the operation. Errors share one body shape (ErrorBody); ' +
        `its error.code says what failed. Request bodies are limited to ${MAX_BODY_BYTES} bytes.`,
    },
    // Relative to where this document is served: the server that serves it answers the queries too.
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    // Every path is public: the data is public domain and the service is read-only.
    security: [],
    paths: {
      '/v1/query': {
        post: {
          operationId: 'query',
          summary: 'Run one operation of the device-510k database.',
          requestBody: { required: true, content: json(byOperation('Request')) },
          responses: {
            '200': { description: 'The operation answered.', headers: cors, content: json(byOperation('Response')) },
            '400': errorResponse('malformed_json, invalid_request, unsupported_version, unknown_operation, invalid_input or invalid_cursor.'),
            '404': errorResponse('record_not_found or product_code_not_found.'),
            ...slowClient,
            '413': errorResponse('request_too_large: the body is over 64 KiB.'),
            '415': errorResponse('unsupported_media_type: the body was not sent as application/json.'),
            '500': errorResponse('internal_error: a bug; it was logged on the server.'),
            '503': errorResponse('source_unavailable: no valid snapshot is loaded, or search is not available yet.'),
          },
        },
        options: {
          operationId: 'queryPreflight',
          summary: 'CORS preflight.',
          responses: {
            '204': {
              description: 'Cross-origin POSTs with a JSON body are allowed from any origin.',
              headers: {
                ...cors,
                'Access-Control-Allow-Methods': { schema: { type: 'string', const: 'POST, OPTIONS' } },
                'Access-Control-Allow-Headers': { schema: { type: 'string', const: 'Content-Type' } },
              },
            },
            ...slowClient,
          },
        },
      },
      '/v1/export': {
        get: {
          operationId: 'export',
          summary: "Every match of a search, in the search's order, as CSV (RFC 4180, UTF-8 with a BOM) or NDJSON (one record a line).",
          description:
            'Takes the inputs of device-510k.search but page and pageSize, as query parameters (omitted ones are null), and streams ' +
            'every match with no cap. `limit` cuts the walk into parts: the next part is at X-Next-Cursor (and Link rel="next"). ' +
            '`after` resumes after the last K number received.',
          parameters: exportParameters(),
          responses: {
            '200': {
              description: 'The matches, streamed.',
              headers: {
                ...cors,
                'X-Total-Count': { description: 'Matches of the whole search.', schema: { type: 'integer' } },
                'X-Export-Count': { description: 'Records in this answer.', schema: { type: 'integer' } },
                'X-Next-Cursor': { description: 'The cursor of the next part, when limit cut this one short.', schema: { type: 'string' } },
                'X-Snapshot-Token': { description: 'The snapshot the records come from.', schema: { type: 'string' } },
                'Content-Encoding': { description: 'br or gzip when Accept-Encoding allows one (chosen as for JSON answers); absent otherwise.', schema: { type: 'string' } },
              },
              content: {
                'text/csv': { schema: { type: 'string', description: 'A header row, then one row per record.' } },
                'application/x-ndjson': { schema: ref('ClearanceRecord') },
              },
            },
            '400': errorResponse('invalid_input (a parameter breaks a rule) or invalid_cursor.'),
            '503': errorResponse(
              'source_unavailable: no valid snapshot is loaded, or search is not available yet; or overloaded: the server streams as ' +
                'many exports as it allows (EXPORT_CONCURRENCY), try again after the Retry-After header\'s seconds.',
            ),
          },
        },
      },
      '/v1/changes': {
        get: {
          operationId: 'changes',
          summary: "The snapshot's change sets after a time, oldest first: each change names the K number, the kind (added, changed, removed) and the changed members with their values before and after.",
          parameters: [
            { name: 'since', in: 'query', required: true, schema: { type: 'string', description: 'A date (2026-11-01, the start of that day in UTC) or an RFC 3339 time.' } },
            { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'ndjson'], default: 'json' } },
          ],
          responses: {
            '200': {
              description:
                'The change sets (JSON), or one change a line (NDJSON). A since before the kept history gets every set kept, with ' +
                '`historyStartsAfterSince: true` and the X-History-Starts header: changes before then are not recorded.',
              headers: {
                ...cors,
                'X-Snapshot-Token': { description: 'The snapshot the history comes from.', schema: { type: 'string' } },
                'X-History-Starts': { description: 'Only when since is before the kept history: where it starts (completeSince).', schema: { type: 'string' } },
              },
              content: { 'application/json': { schema: { type: 'object' } }, 'application/x-ndjson': { schema: { type: 'object' } } },
            },
            '400': errorResponse('invalid_input: since is missing or malformed, or an unknown parameter.'),
            '503': errorResponse('source_unavailable: no valid snapshot is loaded.'),
          },
        },
      },
      '/v1/feed': {
        get: {
          operationId: 'feed',
          summary: "The newest matches of a search as an Atom 1.0 feed or a JSON Feed 1.1: newest first by first appearance in the data, then decision date.",
          description:
            "Takes export's search inputs (query, applicant, productCode, yearFrom, yearTo). `kind=removed` lists records removed within the kept history. " +
            'Conditional requests (If-None-Match, If-Modified-Since) answer 304 while the snapshot is the same.',
          parameters: [
            ...exportParameters().filter((p) => ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo'].includes(p.name as string)),
            { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['atom', 'json'], default: 'atom' } },
            { name: 'kind', in: 'query', required: false, schema: { type: 'string', enum: ['new', 'removed'], default: 'new' } },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
          ],
          responses: {
            '200': {
              description: 'The feed.',
              headers: {
                ...cors,
                ETag: { description: 'Changes when the snapshot or the request does.', schema: { type: 'string' } },
                'Last-Modified': { description: "The snapshot's generation time.", schema: { type: 'string' } },
              },
              content: { 'application/atom+xml': { schema: { type: 'string' } }, 'application/feed+json': { schema: { type: 'object' } } },
            },
            '304': { description: 'Not modified since the ETag or time the client sent.' },
            '400': errorResponse('invalid_input: a parameter breaks a rule (the message names it).'),
            '503': errorResponse('source_unavailable: no valid snapshot is loaded.'),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Whether a snapshot is loaded, with its sourceState.',
          responses: {
            '200': { description: 'A snapshot is loaded.', content: json(ref('HealthBody')) },
            ...slowClient,
            '503': { description: 'No valid snapshot is loaded.', content: json(ref('HealthBody')) },
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          responses: { '200': { description: 'The OpenAPI 3.1 document.', content: json({ type: 'object' }) }, ...slowClient },
        },
      },
      ...openFdaPaths(),
      '/snapshot/{path}': {
        get: {
          operationId: 'snapshotFile',
          summary: "A file of the active snapshot, byte for byte (its manifest.json lists them all, with each file's sha256).",
          parameters: [{ name: 'path', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The file; ETag from its content, precompressed when the snapshot holds a .br or .gz copy.' },
            '304': { description: 'Not modified (If-None-Match).' },
            ...slowClient,
            '404': errorResponse('not_found: the snapshot has no such file.'),
            '503': errorResponse('source_unavailable: no valid snapshot is loaded.'),
          },
        },
      },
    },
    components: { schemas: { ...componentsOf(requests, 'input'), ...componentsOf(responses, 'output') } },
  };
}

/** GET /device/510k.json and /device/classification.json: openFDA's URLs, parameters and JSON (src/openfda/). */
function openFdaPaths(): Record<string, unknown> {
  const str = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } });
  const int = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'integer', minimum: 0 } });
  const parameters = [
    str('search', "openFDA's query syntax: field:term, field:\"phrase\", field:[A TO B], AND, OR, NOT, a space or + for OR, parentheses, _exists_:, _missing_:, .exact, a trailing *"),
    str('count', 'A field (or field.exact) to count: [{term, count}] by count, or for a date field [{time, count}] for every day in time order'),
    int('limit', 'Records per page (1 by default, at most 1000) or terms of a count (100 by default, no ceiling)'),
    int('skip', 'Matches to skip (no ceiling)'),
    str('sort', 'field:asc or field:desc, on a date or keyword (.exact) field; ties by K number'),
    str('search_after', 'The key of the previous page\'s last record, as the Link header gives it'),
    str('api_key', 'Accepted and ignored'),
  ];
  const body = { type: 'object', properties: { meta: { type: 'object' }, results: { type: 'array' } }, required: ['meta', 'results'] };
  const error = { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } } };
  const op = (operationId: string, summary: string) => ({
    get: {
      operationId,
      summary,
      parameters,
      responses: {
        '200': {
          description: 'openFDA\'s envelope: meta {disclaimer, terms, license, last_updated, source_state, results {skip, limit, total} or total_terms} and results.',
          headers: { Link: { description: 'rel="next": the next page, present exactly when there is one', schema: { type: 'string' } } },
          content: { 'application/json': { schema: body } },
        },
        '400': { description: 'BAD_REQUEST: the message names the parameter, field or rule.', content: { 'application/json': { schema: error } } },
        '404': { description: 'NOT_FOUND: "No matches found!"', content: { 'application/json': { schema: error } } },
        '503': { description: 'SERVICE_UNAVAILABLE: no snapshot or no search index.', content: { 'application/json': { schema: error } } },
      },
    },
  });
  return {
    '/device/510k.json': op('openFda510k', "510(k) clearances as openFDA's /device/510k.json answers them, exact and without its caps."),
    '/device/classification.json': op('openFdaClassification', "Product classifications as openFDA's /device/classification.json answers them."),
  };
}
