import { ParquetWriter, fileWriter, type SchemaElement } from 'hyparquet-writer';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { COLUMNS, SOURCE_MEMBERS, epochDay, type Column } from './columns.ts';

/**
 * The whole table of clearances as one Parquet file, written with hyparquet-writer (plain JavaScript, one
 * dependency, no native addon): a record a row in the order given (K number ascending), a column per record member.
 *
 * - Types: text is BYTE_ARRAY with the STRING logical type, dates INT32 with the DATE logical type, flags BOOLEAN,
 *   `reviewDays` INT32, `source` a group of its members; a member the record may leave null is OPTIONAL.
 * - Row groups of ROW_GROUP_ROWS: a reader over HTTP (DuckDB, pandas through fsspec, Polars, Spark) fetches the
 *   footer, then only the column chunks of the row groups its query needs, each at most a few MB; each chunk has
 *   min/max statistics (K numbers and dates follow the rows' order closely, so a date range skips most groups) and an
 *   offset index of its pages.
 * - Snappy compression: what every Parquet reader takes, fast to read, and pure JavaScript here, so the same records
 *   give the same bytes on every Node and platform (no zlib version in the output).
 * - Deterministic: no time, host or random value is written; `created_by` names this project.
 */
export const ROW_GROUP_ROWS = 100_000;

const STRING = { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } } as const;

function repetition(required: boolean): 'REQUIRED' | 'OPTIONAL' {
  return required ? 'REQUIRED' : 'OPTIONAL';
}

function elementsOf(column: Column): SchemaElement[] {
  const { name, kind, required } = column;
  const repetition_type = repetition(required);
  switch (kind) {
    case 'text':
      return [{ name, repetition_type, ...STRING }];
    case 'date':
      return [{ name, repetition_type, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }];
    case 'flag':
      return [{ name, repetition_type, type: 'BOOLEAN' }];
    case 'int':
      return [{ name, repetition_type, type: 'INT32' }];
    case 'source':
      return [
        { name, repetition_type, num_children: SOURCE_MEMBERS.length },
        ...SOURCE_MEMBERS.map((m): SchemaElement =>
          m.kind === 'int'
            ? { name: m.name, repetition_type: repetition(m.required), type: 'INT32' }
            : { name: m.name, repetition_type: repetition(m.required), ...STRING },
        ),
      ];
  }
}

export function parquetSchema(): SchemaElement[] {
  return [{ name: 'schema', num_children: COLUMNS.length }, ...COLUMNS.flatMap(elementsOf)];
}

/** The values of one column over `records`, as hyparquet-writer takes them (days since 1970 for dates). */
function columnValues(column: Column, records: readonly ClearanceRecord[]): unknown[] {
  const { name, kind } = column;
  if (kind === 'date') return records.map((r) => (r[name] === null ? null : epochDay(r[name] as string)));
  return records.map((r) => r[name]);
}

/** Writes `records` to `file` (replaced if present) as Parquet, one row group of `groupRows` at a time. */
export function writeParquet(records: readonly ClearanceRecord[], file: string, groupRows = ROW_GROUP_ROWS): void {
  if (!Number.isInteger(groupRows) || groupRows < 1) throw new Error(`groupRows must be a whole number from 1 up, got ${groupRows}`);
  const writer = new ParquetWriter({ writer: fileWriter(file), schema: parquetSchema(), codec: 'SNAPPY', createdBy: 'device-510k' });
  for (let start = 0; start < records.length; start += groupRows) {
    const rows = records.slice(start, start + groupRows);
    const columnData = COLUMNS.map((c) => ({ name: c.name, data: columnValues(c, rows) }));
    // One call a row group: the column arrays of one group at a time are all that is held besides the records.
    void writer.write({ columnData, rowGroupSize: rows.length });
  }
  void writer.finish();
}
