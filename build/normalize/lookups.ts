/** The code → name tables of docs/contract.md section 4, as plain maps. */
export type Lookups = {
  /** Decision codes, 4-letter (SESE) and 2-letter (SE), to their description. */
  decisions: ReadonlyMap<string, string>;
  /** Two-letter advisory-committee codes to openFDA's committee names. */
  committees: ReadonlyMap<string, string>;
};

/** The description of a decision code; an unknown code is kept as it is. */
export function decisionName(lookups: Lookups, code: string | null): string | null {
  if (code === null) return null;
  const direct = lookups.decisions.get(code);
  if (direct !== undefined) return direct;
  // The pipe files' 4-letter codes are "SE" + a 2-letter decision code (SESP = SE + SP); SESE itself is listed.
  if (code.length === 4 && code.startsWith('SE')) return lookups.decisions.get(code.slice(2)) ?? code;
  return code;
}

/** The committee's name for its code; an unknown code is kept as it is. */
export function committeeName(lookups: Lookups, code: string | null): string | null {
  if (code === null) return null;
  return lookups.committees.get(code) ?? code;
}
