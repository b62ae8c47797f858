import { describe, expect, it } from 'vitest';
import { decodeCp1252, decodePipeText, detectKind, openFdaResults, pipeRows } from '../../build/sources/parse.ts';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('decoding', () => {
  it('decodes Windows-1252 specials, not Latin-1 controls', () => {
    expect(decodeCp1252(bytes('Navigator', [0x99], ' ', [0x93], 'x', [0x94], ' ', [0xae], ' ', [0x80]))).toBe('Navigator™ “x” ® €');
  });
  it('removes NUL bytes', () => {
    expect(decodePipeText(bytes('P.O. Box 3093', [0, 0, 0], '|x'))).toBe('P.O. Box 3093|x');
  });
});

describe('pipeRows', () => {
  it('keys rows by header, keeps quotes, reports bad rows with their line', () => {
    const text = 'A|B|C\r\n1|"G"|3\r\n\r\n1|2\r\nx|y|z\r\n';
    expect([...pipeRows(text)]).toEqual([
      { line: 2, row: { A: '1', B: '"G"', C: '3' } },
      { line: 3, problem: 'blank line' },
      { line: 4, problem: '2 fields where the header has 3' },
      { line: 5, row: { A: 'x', B: 'y', C: 'z' } },
    ]);
  });
  it('does not count a final line break as a row', () => {
    expect([...pipeRows('A\n1\n')]).toHaveLength(1);
    expect([...pipeRows('A\n1')]).toHaveLength(1);
  });
});

describe('detectKind', () => {
  it.each([
    ['KNUMBER|APPLICANT|DECISIONDATE\r\n', 'pmn'],
    ['REVIEW_PANEL|MEDICALSPECIALTY|PRODUCTCODE|DEVICENAME|DEVICECLASS\r\n', 'foiclass'],
    ['\uFEFF{"meta":{},"results":[]}', 'openfda-json'],
    ['  {\n"results": []}', 'openfda-json'],
    ['hello,world\n', null],
  ])('%j is %j', (text, kind) => expect(detectKind(Buffer.from(text, 'utf8'))).toBe(kind));
  it('rejects JSON without results', () => {
    expect(() => openFdaResults('{"meta":{}}')).toThrow(/no "results" array/);
  });
});
