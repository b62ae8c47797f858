/**
 * A K number as the index stores it (its six digits, as a number) and as every answer writes it (`K` and six digits):
 * the one place the text is made, for the engine, the chunked index, exports, feeds and the openFDA endpoints.
 */
export const kNumberText = (digits: number): string => `K${String(digits).padStart(6, '0')}`;
