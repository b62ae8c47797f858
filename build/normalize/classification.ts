import type { Classification } from '../../src/contract/index.ts';
import { committeeName, type Lookups } from './lookups.ts';
import { productCodeOf, trimmed, upper } from './text.ts';

export type ClassificationOutcome = { kind: 'classification'; value: Classification } | { kind: 'skip'; reason: string };

/** One row of FDA's foiclass.txt, by column name (CONTRACT.md section 5). */
export function fromFoiclassRow(row: Readonly<Record<string, string>>, lookups: Lookups): ClassificationOutcome {
  const code = productCodeOf(row.PRODUCTCODE);
  if (code.value === null) return { kind: 'skip', reason: code.issue ?? 'no product code' };
  return {
    kind: 'classification',
    value: {
      productCode: code.value,
      deviceType: trimmed(row.DEVICENAME),
      deviceClass: trimmed(row.DEVICECLASS),
      regulationNumber: trimmed(row.REGULATIONNUMBER),
      medicalSpecialty: committeeName(lookups, upper(row.MEDICALSPECIALTY)),
      reviewPanel: committeeName(lookups, upper(row.REVIEW_PANEL)),
      definition: trimmed(row.DEFINITION),
    },
  };
}
