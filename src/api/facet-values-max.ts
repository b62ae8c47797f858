import { FACET_VALUES_MAX } from '../contract/operations.ts';

/**
 * A host's bound on the values one search facet lists (docs/limits.md): a whole number from 1 to the contract's
 * FACET_VALUES_MAX. A host may lower it, never raise it: the contract's figure is what keeps an answer's size bounded.
 */
export function checkFacetValuesMax(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1 || value > FACET_VALUES_MAX) {
    throw new Error(`Expected \`${name}\` to be a whole number from 1 to ${FACET_VALUES_MAX}, got ${value}`);
  }
  return value;
}
