import type { z } from 'zod';
import type { ErrorDetail } from '../../contract/index.ts';
import { issuesToDetails, ruleOf } from '../issues.ts';
import { sentenceOf } from '../../operations/errors.ts';
import type { Answer } from './backend.ts';

/** A tool's result as MCP sends it: structured content matching the tool's output schema, and its text. */
export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export type ToolError = { code: string; message: string; details: ErrorDetail[] };

/** A failure as a tool result: the error table's code and message, and each detail on a line of its own. */
export function errorResult(error: ToolError): ToolResult {
  const lines = [`${error.code}: ${error.message}`];
  if (error.details.length > 1) for (const d of error.details) lines.push(`- ${d.path} ${d.message}`);
  return { content: [{ type: 'text', text: lines.join('\n') }], isError: true };
}

/** The error of an answer that is not a 200, as the service's canonical error body gives it. */
export function answerError(answer: Answer): ToolResult {
  const body = answer.body as { error?: Partial<ToolError> } | null;
  const error = body?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return errorResult({ code: error.code, message: error.message, details: Array.isArray(error.details) ? error.details : [] });
  }
  return errorResult({ code: 'internal_error', message: `The service answered ${answer.status} without the error body it always sends.`, details: [] });
}

/**
 * A tool's arguments checked against its schema, worded as the service words an envelope's input (`arguments.pageSize
 * must be at most 50`), or the invalid_input result to return.
 */
export function parseArgs<S extends z.ZodType>(schema: S, args: unknown, tool: string): { ok: true; value: z.output<S> } | { ok: false; result: ToolResult } {
  const parsed = schema.safeParse(args ?? {}, { error: ruleOf });
  if (parsed.success) return { ok: true, value: parsed.data };
  const details = issuesToDetails(parsed.error.issues, 'arguments', tool);
  return { ok: false, result: errorResult({ code: 'invalid_input', message: sentenceOf(details), details }) };
}

/** The arguments as given, without the members left out (undefined), for a `next` a model can send back as it is. */
export function given(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (v !== undefined) out[k] = v;
  return out;
}

/** How an answer says it was cut and how to go on, as the last line of its text. */
export function cutLine(tool: string, what: string, shown: number, of: number, budget: number, next: Record<string, unknown> | null): string {
  const more = next ? ` Next: call ${tool} with ${JSON.stringify(next)}.` : '';
  return `Cut to fit ${budget} bytes: ${shown} of ${of} ${what} shown.${more}`;
}

export function textResult(structured: Record<string, unknown>, text: string): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
