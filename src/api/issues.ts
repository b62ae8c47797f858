import type { z } from 'zod';
import type { ErrorDetail } from '../contract/index.ts';

/**
 * zod issues as the contract's `details`: a path like `input.pageSize` and a rule like `must be at most 50`. The
 * contract's schemas word most rules themselves; `ruleOf` words the rest, so zod's own phrasing never reaches a client.
 */
type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** Per-parse error map: used for issues the schema itself does not word. */
export function ruleOf(issue: RawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${ARTICLE[issue.expected] ?? issue.expected}`;
    case 'too_big':
      return issue.origin === 'string' ? `must be at most ${issue.maximum} characters` : `must be at most ${issue.maximum}`;
    case 'too_small':
      return issue.origin === 'string' ? `must be at least ${issue.minimum} characters` : `must be at least ${issue.minimum}`;
    case 'invalid_value':
      return `must be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'invalid_format':
      return 'is malformed';
    case 'unrecognized_keys':
      return 'is not a field of this operation';
    default:
      return 'is invalid';
  }
}

export function pathOf(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

export function issuesToDetails(issues: readonly Issue[], prefix: string, operation: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ path: pathOf(prefix, [...issue.path, key]), message: `is not a field of ${operation}` });
    } else {
      details.push({ path: pathOf(prefix, issue.path), message: issue.message });
    }
  }
  return details;
}

export { sentenceOf } from '../operations/errors.ts';
