import type { z } from 'zod';
import type { ErrorDetail } from '../../contract/index.ts';
import { issuesToDetails, ruleOf } from '../issues.ts';
import { sentenceOf } from '../../operations/errors.ts';
import type { Answer } from './backend.ts';
import { fitToBudget } from './budget.ts';

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

/** How a result was cut to the byte budget: the entries of its list shown, of how many; null when it is whole. */
export type CutInfo = { shown: number; of: number; budgetBytes: number } | null;

/** What a list result is made from (listResult). */
/** The structured content of a list result: `next` gives the arguments that go on, or is null at the end. */
type ListContent = Record<string, unknown> & { next: Record<string, unknown> | null };

export type ListSpec<S extends ListContent> = {
  tool: string;
  /** The list's entries, in words: `records of this page`, `values`. */
  what: string;
  /** Entries the list has before any cut. */
  count: number;
  budgetBytes: number;
  /** The structured content with the first `k` entries, `cut` as it says, and `next`: the arguments that go on (null at the end). */
  structuredOf: (k: number, cut: CutInfo) => S;
  textOf: (structured: S) => string;
  /** Added to the line that says the result was cut. */
  cutNote?: string;
};

/** The structured content and text of a list result with its first `k` entries, and the JSON of its content. */
function renderList<S extends ListContent>(spec: ListSpec<S>, k: number): { structured: S; json: string; text: string } {
  const { tool, what, count, budgetBytes } = spec;
  const cut: CutInfo = k < count ? { shown: k, of: count, budgetBytes } : null;
  const structured = spec.structuredOf(k, cut);
  const next = structured.next;
  let text = spec.textOf(structured);
  if (cut) text += `\nCut to fit ${budgetBytes} bytes: ${k} of ${count} ${what} shown.${next ? ` Next: call ${tool} with ${JSON.stringify(next)}.` : ''}${spec.cutNote ?? ''}`;
  else if (next) text += `\nMore: call ${tool} with ${JSON.stringify(next)}.`;
  return { structured, json: JSON.stringify(structured), text };
}

/**
 * A tool's result whose one list is cut to fit the byte budget (JSON and text each within it), keeping its first
 * entries: the text's last line says that it was cut and gives the next call's arguments, or, whole but with more to
 * come, gives them too.
 */
export function listResult<S extends ListContent>(spec: ListSpec<S>): ToolResult {
  const { rendered } = fitToBudget(spec.count, spec.budgetBytes, (k) => renderList(spec, k));
  return textResult(rendered.structured, rendered.text);
}

/** How many entries of the list fit (listResult keeps as many), for a tool that must ask for something before it answers. */
export function listFit<S extends ListContent>(spec: ListSpec<S>): number {
  return fitToBudget(spec.count, spec.budgetBytes, (k) => renderList(spec, k)).k;
}

/** The list result with its first `k` entries (`k` from listFit, rendered again with what the tool then asked for). */
export function listResultOf<S extends ListContent>(spec: ListSpec<S>, k: number): ToolResult {
  const rendered = renderList(spec, k);
  return textResult(rendered.structured, rendered.text);
}

export function textResult(structured: Record<string, unknown>, text: string): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
