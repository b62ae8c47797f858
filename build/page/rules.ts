/**
 * What the page reckons as the service does, bundled into public/js/service-rules.js (npm run build:page): the
 * freshness of the data, a record's review days, where a lineage closure file holds a device's entry, where the
 * record names files hold a device's name, and the qualifiers the query language takes, from the service's own
 * modules, so that the page has no copy of its own to drift.
 */
export { freshnessOf } from '../../src/api/source-state.ts';
export { closureEntrySpan, closureLayout } from '../../src/contract/lineage-closure-layout.ts';
export { RECORD_NAMES, recordNameEntry, recordNameSpan } from '../../src/contract/record-names.ts';
export { reviewDaysOf } from '../../src/contract/review-days.ts';
export { QUALIFIERS } from '../../src/search/qualifiers.ts';
