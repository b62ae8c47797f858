import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { ClearanceRecord } from '../../src/contract/index.ts';
import { ingest, type Ingested } from '../../build/merge/ingest.ts';
import { readLookups } from '../../build/sources/lookups.ts';
import { readSources } from '../../build/sources/read.ts';
import { FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';

let result: Ingested;
const byK = (k: string) => result.records.find((r) => r.kNumber === k);

/** Counts data rows and distinct numbers straight from the fixture bytes, independently of the build's parser. */
async function rawCounts() {
  const ks = new Set<string>();
  let rows = 0;
  for (const path of FIXTURE_SOURCES.slice(0, 3)) {
    const buf = await readFile(path);
    if (path.endsWith('.json')) {
      const results = JSON.parse(buf.toString('utf8')).results as { k_number: string }[];
      rows += results.length;
      for (const r of results) ks.add(r.k_number);
    } else {
      const lines = buf.toString('latin1').split('\r\n').slice(1).filter((l) => l !== '');
      rows += lines.length;
      for (const l of lines) ks.add(l.split('|')[0] as string);
    }
  }
  return { rows, ks };
}

beforeAll(async () => {
  const { inputs } = await readSources(FIXTURE_SOURCES);
  result = ingest(inputs, await readLookups());
});

describe('ingest of real fixture rows', () => {
  it('makes exactly one record per distinct K number and accounts for every other row', async () => {
    const { rows, ks } = await rawCounts();
    const kOnly = [...ks].filter((k) => /^K\d{6}$/.test(k));
    expect(result.records.map((r) => r.kNumber)).toEqual(kOnly.sort());
    const clearanceSources = result.report.sources.filter((s) => s.kind !== 'foiclass');
    const accounted = clearanceSources.reduce((n, s) => n + s.records + s.merged + s.skipped, 0);
    expect(accounted).toBe(rows);
    expect(clearanceSources.reduce((n, s) => n + s.rows, 0)).toBe(rows);
    expect(result.report.merged.length + result.report.skipped.length + result.records.length).toBe(rows);
  });

  it('every record satisfies the contract schema, members in contract order', () => {
    for (const r of result.records) expect(ClearanceRecord.parse(r)).toEqual(r);
    expect(Object.keys(result.records[0] as object)).toEqual([
      'id', 'kNumber', 'title', 'deviceName', 'applicant', 'productCode', 'decisionDate', 'decisionDescription',
      'receivedDate', 'advisoryCommittee', 'classificationCommittee', 'statementOrSummary', 'submissionType',
      'thirdParty', 'expeditedReview', 'countryCode', 'evidenceStatus', 'source',
      // Extensions, after the contract's members.
      'contact', 'street1', 'street2', 'city', 'state', 'zipCode', 'postalCode', 'decisionCode', 'reviewDays',
    ]);
  });

  it('decodes Windows-1252 and nulls the impossible decision date of FDA glitch rows, reporting it', () => {
    const r = byK('K261915');
    expect(r?.deviceName).toBe('Navigator™ Flex Ureteral Access Sheath Set');
    expect(r?.decisionDate).toBeNull();
    expect(r?.receivedDate).toBe('2026-06-09');
    expect(result.report.fieldIssues).toContainEqual({
      file: expect.stringMatching(/pmn-1976-1990-sample\.txt$/),
      line: expect.any(Number),
      entry: null,
      kNumber: 'K261915',
      reason: 'decisionDate: date before 1900 "08/04/0020"',
    });
  });

  it('maps a NUL-padded row field by field', () => {
    expect(byK('K802527')).toEqual({
      id: 'K802527',
      kNumber: 'K802527',
      title: 'TEST KIT FOR DETECTION OF ANTINUCLEAR',
      deviceName: 'TEST KIT FOR DETECTION OF ANTINUCLEAR',
      applicant: 'Bartels & Stout, Inc.',
      productCode: 'DHN',
      decisionDate: '1981-01-05',
      decisionDescription: 'Substantially Equivalent',
      receivedDate: '1980-10-15',
      advisoryCommittee: 'Immunology',
      classificationCommittee: 'Immunology',
      statementOrSummary: null,
      submissionType: 'Traditional',
      thirdParty: false,
      expeditedReview: null,
      countryCode: 'US',
      evidenceStatus: 'available',
      source: {
        schemaVersion: 1,
        sourceId: 'v1:device-510k:K802527',
        collection: 'device-510k',
        recordId: 'K802527',
        textOrigin: 'metadata',
        sourceUrl: 'https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=K802527',
      },
      contact: 'KEVIN T MCGOURTY',
      street1: 'P.O. Box 3093',
      street2: null,
      city: 'Bellevue',
      state: 'WA',
      zipCode: '98009',
      postalCode: '98009',
      decisionCode: 'SESE',
      reviewDays: 82,
    });
  });

  it('maps the applicant\'s address and the decision code from openFDA JSON, and counts review days', () => {
    const r = byK('K801853');
    expect(r).toMatchObject({
      contact: null,
      street1: '803 N. Front St. Suite 3',
      street2: null,
      city: 'Mchenry',
      state: 'IL',
      zipCode: '60050',
      postalCode: '60050',
      decisionCode: 'SESE',
      receivedDate: '1980-08-04',
      decisionDate: '1980-08-13',
      reviewDays: 9,
    });
    // The glitch row has no decision date left, so no review time.
    expect(byK('K261915')?.reviewDays).toBeNull();
  });

  it('skips De Novo rows with file, line and reason', () => {
    const den = result.report.skipped.filter((s) => s.kNumber?.startsWith('DEN'));
    expect(den.length).toBeGreaterThanOrEqual(4);
    for (const s of den) {
      expect(s.reason).toBe('not a 510(k): De Novo number');
      expect(s.line ?? s.entry).toBeGreaterThan(0);
    }
    expect(result.records.some((r) => r.kNumber.startsWith('DEN'))).toBe(false);
  });

  it('merges a K number present in the openFDA JSON and a later pipe file field by field', () => {
    const r = byK('K191320');
    // From the JSON only (the pipe file has no such column): kept.
    expect(r?.classificationCommittee).toBe('Dental');
    // From the later pipe file: added where the JSON had nothing.
    expect(r?.receivedDate).toBe('2019-05-15');
    expect(r?.statementOrSummary).toBe('Summary');
    expect(r?.advisoryCommittee).toBe('Dental');
    expect(result.report.merged).toContainEqual(
      expect.objectContaining({ kNumber: 'K191320', reason: expect.stringMatching(/^merged into the record from .*openfda-510k-sample\.json entry \d+$/) }),
    );
  });

  it('keeps quotes as ordinary characters', () => {
    expect(byK('K884296')?.applicant).toBe('"O" Co., Inc.');
    expect(byK('K882253')?.applicant).toBe('Stoute\'S "Assist-Seat" Corp.');
  });

  it('reads foiclass with committee names and exact device classes', () => {
    const codes = result.classifications.map((c) => c.productCode);
    expect(codes).toEqual([...codes].sort());
    expect(codes).not.toContain('BSP');
    const dtb = result.classifications.find((c) => c.productCode === 'DTB');
    expect(dtb).toMatchObject({ deviceType: expect.stringMatching(/pacemaker/i), deviceClass: '3', reviewPanel: 'Cardiovascular' });
  });

  it('reads foiclass flags and codes, naming the codes FDA documents', () => {
    // DTB|...|3||N|N||870.3680|2|||||Y|N|Ineligible
    expect(result.classifications.find((c) => c.productCode === 'DTB')).toMatchObject({
      submissionType: 'PMA',
      unclassifiedReason: null,
      gmpExempt: false,
      thirdPartyEligible: false,
      thirdPartyReviewCode: null,
      implant: true,
      lifeSustaining: false,
      summaryMalfunctionReporting: 'Ineligible',
      physicalState: null,
      technicalMethod: null,
      targetArea: null,
    });
    // BZC|...|2||N|Y||868.1880|1|||||N|N|Eligible
    expect(result.classifications.find((c) => c.productCode === 'BZC')).toMatchObject({
      submissionType: '510(k)',
      thirdPartyEligible: true,
      implant: false,
      summaryMalfunctionReporting: 'Eligible',
    });
    // KJJ|...|U|1|N|N|||1|...: unclassified, pre-amendment.
    expect(result.classifications.find((c) => c.productCode === 'KJJ')).toMatchObject({ deviceClass: 'U', unclassifiedReason: 'Pre-Amendment' });
  });
});
