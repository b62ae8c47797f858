/**
 * What the static page needs to answer a lineage question itself, bundled into public/js/lineage-engine.js
 * (npm run build:page): the same walk over the same files as the service's device-510k.lineage, loaded only when a
 * lineage is shown.
 */
export { LineageFiles, walkLineage, lineageCounts, positionAfter } from '../../src/operations/lineage-walk.ts';
export { HAS_RECORD, LINEAGE_INDEX_PATH, decodeLineageClosure, lineageClosurePath, lineageCode, lineageNumber, lineageShardId } from '../../src/contract/lineage.ts';
