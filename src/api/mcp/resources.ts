import { ClearanceRecord } from '../../contract/index.ts';
import type { McpBackend } from './backend.ts';

/**
 * The resources: what a model may read before it asks (the query language, the fields) and which snapshot answers
 * (its sourceState). The fields and the source state come from `device-510k.meta`, so they are the serving
 * snapshot's, never a copy made when this was written.
 */
export type Resource = { uri: string; name: string; title: string; description: string; mimeType: string };

export const QUERY_SYNTAX_URI = 'device-510k://docs/query-syntax';
export const FIELDS_URI = 'device-510k://fields';
export const SOURCE_STATE_URI = 'device-510k://source-state';

export const RESOURCES: readonly Resource[] = [
  {
    uri: QUERY_SYNTAX_URI,
    name: 'query-syntax',
    title: 'The query language',
    description: 'How to write the `query` of search_clearances, count_by and review_time_stats: words, phrases, OR, exclusions and qualifiers, with examples.',
    mimeType: 'text/markdown',
  },
  {
    uri: FIELDS_URI,
    name: 'fields',
    title: 'Fields, filters, sorts and qualifiers',
    description: 'The members of a clearance record, the fields count_by can count, the sorts, and every qualifier the query language accepts with its forms.',
    mimeType: 'application/json',
  },
  {
    uri: SOURCE_STATE_URI,
    name: 'source-state',
    title: 'Which snapshot answers, and how fresh it is',
    description: "The serving snapshot's sourceState: availability, freshness, FDA source revision, when it was generated and last synced.",
    mimeType: 'application/json',
  },
];

export const QUERY_SYNTAX = `# The query language

Every word must match, as a prefix, a word of the device name, K number, product code, applicant or the product
code's device type; case and accents are ignored. \`""\` (empty) matches every clearance.

| write | means |
|---|---|
| \`catheter -foley\` | catheter, but not Foley (a leading \`-\` excludes any term) |
| \`"balloon catheter"\` | the words next to each other in the device name |
| \`pacemaker OR defibrillator\` | either (plain juxtaposition is AND) |
| \`applicant:bard\` | company names with a word starting \`bard\` (legal suffixes ignored) |
| \`applicant:"c.r. bard, inc."\` | that name exactly |
| \`device:catheter\`, \`code:DQY\`, \`panel:cardiovascular\`, \`class:2\` | device-name words; the product code; the review committee; the device class (1, 2, 3) |
| \`decision:SESE\`, \`type:special\` | the decision code or the start of its name; the submission type |
| \`thirdparty:yes\`, \`expedited:no\`, \`summary:yes\` | FDA's flags |
| \`country:DE\`, \`state:MN\` | the applicant's country and state |
| \`decided:2024\`, \`decided:2024-01-01..2024-03-31\`, \`received:>=2023-06\`, \`reviewdays:>180\` | dates (a year, month or day; \`a..b\`, \`>=\`, \`>\`, \`<=\`, \`<\`) and review times in days |

Examples:

- \`pulse oximeter decided:2024\`: pulse oximeters cleared in 2024.
- \`code:DQY reviewdays:>180\`: DQY clearances that took more than 180 days.
- \`class:3 panel:cardiovascular -medtronic\`: class 3 cardiovascular devices, Medtronic's excluded.

Limits: 2,048 characters, 64 terms, 32 OR branches. An unknown qualifier or a malformed value is an error naming it
and the forms it accepts.
`;

/** A resource's text, or null for a URI that is not one of them. */
export async function readResource(uri: string, backend: McpBackend): Promise<{ text: string; mimeType: string } | { error: string } | null> {
  if (uri === QUERY_SYNTAX_URI) return { text: QUERY_SYNTAX, mimeType: 'text/markdown' };
  if (uri !== FIELDS_URI && uri !== SOURCE_STATE_URI) return null;
  const answer = await backend.query('device-510k.meta', {});
  const body = answer.body as { data?: Record<string, unknown>; sourceState?: unknown; error?: { code: string; message: string } };
  if (answer.status !== 200 || !body.data) return { error: body.error ? `${body.error.code}: ${body.error.message}` : `the service answered ${answer.status}` };
  if (uri === SOURCE_STATE_URI) return { text: JSON.stringify(body.sourceState, null, 2), mimeType: 'application/json' };
  const { supportedFilters, supportedSorts, qualifiers, facetFields, totalRecords } = body.data;
  const fields = { totalRecords, recordMembers: Object.keys(ClearanceRecord.shape), countByFields: facetFields, sorts: supportedSorts, filters: supportedFilters, qualifiers };
  return { text: JSON.stringify(fields, null, 2), mimeType: 'application/json' };
}
