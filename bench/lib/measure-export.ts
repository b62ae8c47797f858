import { sampleMemory, memoryOf } from './procs.ts';

export type ExportMeasurement = {
  records: number;
  bytes: number;
  seconds: number;
  recordsPerSecond: number;
  /** The server's resident memory before the export, and its highest figure while the export streamed. */
  rssBefore: number;
  rssPeak: number;
  rssGrowth: number;
};

/**
 * Streams one export from a running server (`GET /v1/export?…&limit=…`) to its end, counting records as they
 * arrive, while sampling the server's resident memory (`pid`): throughput and how much the server grew to serve it.
 * The target at 1,000,000 records: 100,000 matches at >= 50,000 records/s with < 50 MiB of growth.
 */
export async function measureExport(baseUrl: string, pid: number, params: { query?: string; format?: 'csv' | 'ndjson'; limit?: number; sort?: string } = {}): Promise<ExportMeasurement> {
  const search = new URLSearchParams({ query: params.query ?? '', format: params.format ?? 'ndjson', limit: String(params.limit ?? 100_000) });
  if (params.sort) search.set('sort', params.sort);
  const rssBefore = memoryOf(pid)?.rss ?? 0;
  const memory = sampleMemory(pid, 50);
  const t0 = performance.now();
  const res = await fetch(`${baseUrl}/v1/export?${search}`);
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}: ${await res.text()}`);
  let records = 0;
  let bytes = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (let i = 0; i < value.length; i++) if (value[i] === 0x0a) records++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const rssPeak = memory.stop();
  // CSV's header row ends in a line break too.
  if ((params.format ?? 'ndjson') === 'csv') records--;
  return { records, bytes, seconds, recordsPerSecond: records / seconds, rssBefore, rssPeak, rssGrowth: rssPeak - rssBefore };
}
