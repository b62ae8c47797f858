import { checkQueryShape } from '../search/cost.ts';
import { parseQuery, QueryError, type ParsedQuery } from '../search/grammar.ts';
import { ApiError, sentenceOf } from './errors.ts';

/**
 * A search's query parsed by the grammar (docs/search.md), once, where the request enters (the search operation's
 * `prepare`, and GET /v1/export); the parse travels down to the engine, which does not parse again. A query that
 * breaks the grammar, or a limit that needs no index (terms, OR branches, exclusions, phrases), is an invalid_input
 * error at `path`, its message naming the part and the accepted forms, or the limit and the query's value.
 */
export function parseSearchQuery(text: string, path: string): ParsedQuery {
  try {
    const parsed = parseQuery(text);
    // The limits that need no index (src/search/cost.ts); those that need one are checked where the index is.
    checkQueryShape(parsed);
    return parsed;
  } catch (err) {
    if (!(err instanceof QueryError)) throw err;
    const details = [{ path, message: err.message }];
    throw new ApiError('invalid_input', sentenceOf(details), { details });
  }
}
