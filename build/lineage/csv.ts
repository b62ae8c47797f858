/**
 * RFC 4180 CSV: fields separated by commas, lines by LF or CRLF, a field in double quotes may hold commas, line
 * breaks and doubled quotes. Empty lines are skipped. An unclosed quote is an error naming the file.
 */
export function parseCsv(text: string, name: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(field);
    field = '';
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') endRow();
    else if (c === '\r' && text[i + 1] === '\n') continue;
    else field += c;
  }
  if (quoted) throw new Error(`${name}: a quoted field is not closed`);
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
