import type { z } from 'zod';
import { FAST_INPUTS, OPERATIONS, OPERATION_NAMES, isOperationName, type ErrorDetail, type OperationName } from '../contract/index.ts';
import { ApiError } from './errors.ts';
import { issuesToDetails, ruleOf, sentenceOf } from './issues.ts';

/**
 * The request envelope, checked in the order of docs/contract.md section 2: JSON, then shape, then version, then
 * operation. Pure: bytes in, a known operation and its raw input out, or an ApiError. Members other than the three are
 * ignored, as the contract names no error for them.
 */
export type Envelope = { operation: OperationName; input: Record<string, unknown> };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** UTF-8 text to a string, or null when it is not UTF-8 (a BOM at the start is dropped, as a decoder would). */
function utf8Text(body: Uint8Array): string | null {
  try {
    return strictUtf8.decode(body);
  } catch {
    return null;
  }
}

/** Throws on bytes that are not UTF-8 (overlong forms and surrogates included), and drops a BOM at the start. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();
const byteLength = (text: string): number => encoder.encode(text).length;

/**
 * Where JSON.parse stopped, as a byte offset into the body, when the engine says: its messages name a character
 * position for most errors and none for a few. The parser's own wording is never sent.
 */
function failedAt(err: unknown, text: string): number | null {
  const message = err instanceof Error ? err.message : '';
  const position = /at position (\d+)/.exec(message);
  if (position) return byteLength(text.slice(0, Number(position[1])));
  if (/end of JSON input/i.test(message)) return byteLength(text);
  return null;
}

export function parseJsonBody(body: Uint8Array): unknown {
  const text = utf8Text(body);
  if (text === null) {
    throw new ApiError('malformed_json', 'The request body is not UTF-8 text, so it cannot be JSON.', {
      details: [{ path: 'body', message: 'must be UTF-8 text' }],
    });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = failedAt(err, text);
    const where = at === null ? '' : ` (the first problem is at byte ${at})`;
    throw new ApiError('malformed_json', `The request body is not valid JSON${where}.`, {
      details: [{ path: 'body', message: `must be valid JSON${where}` }],
    });
  }
}

export function checkEnvelope(value: unknown): Envelope {
  if (!isPlainObject(value)) {
    throw new ApiError('invalid_request', 'The request body must be a JSON object with version, operation and input.', {
      details: [{ path: 'body', message: 'must be an object' }],
    });
  }
  const details: ErrorDetail[] = [];
  const { version, operation, input } = value;
  if (version === undefined) details.push({ path: 'version', message: 'is required' });
  else if (typeof version !== 'number') details.push({ path: 'version', message: 'must be the number 1' });
  if (operation === undefined) details.push({ path: 'operation', message: 'is required' });
  else if (typeof operation !== 'string') details.push({ path: 'operation', message: 'must be a string' });
  if (input === undefined) details.push({ path: 'input', message: 'is required' });
  else if (!isPlainObject(input)) details.push({ path: 'input', message: 'must be an object' });
  if (details.length > 0) throw new ApiError('invalid_request', sentenceOf(details), { details });

  if (version !== 1) {
    throw new ApiError('unsupported_version', `Version ${String(version)} is not supported; this service speaks version 1.`, {
      details: [{ path: 'version', message: 'must be 1' }],
    });
  }
  if (!isOperationName(operation)) {
    throw new ApiError('unknown_operation', `${JSON.stringify(operation)} is not an operation of this service.`, {
      details: [{ path: 'operation', message: `must be one of ${OPERATION_NAMES.join(', ')}` }],
    });
  }
  return { operation, input: input as Record<string, unknown> };
}

/** The operation name a body names, when it is a known one, for error bodies of requests that fail later on. */
export function knownOperationOf(value: unknown): OperationName | null {
  return isPlainObject(value) && isOperationName(value.operation) ? value.operation : null;
}

/** Validates an operation's input with its contract schema; failures become `invalid_input` with one detail per rule. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, operation: OperationName): z.output<S> {
  // The common valid input costs a few comparisons; anything else goes to the schema, which words the errors.
  if ((schema as z.ZodType) === OPERATIONS[operation]) {
    const fast = FAST_INPUTS[operation](input as Record<string, unknown>);
    if (fast !== undefined) return fast as z.output<S>;
  }
  const parsed = schema.safeParse(input, { error: ruleOf });
  if (parsed.success) return parsed.data;
  const details = issuesToDetails(parsed.error.issues, 'input', operation);
  throw new ApiError('invalid_input', sentenceOf(details), { details });
}
