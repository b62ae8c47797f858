import type { Answer, McpBackend } from '../../src/api/mcp/index.ts';

/** A backend over records of its own that can be changed, counting the operations it is asked. */
export function countingBackend(deviceName: (id: string) => string) {
  const asked: string[] = [];
  const record = (id: string) => ({ id, kNumber: id, deviceName: deviceName(id), applicant: 'Acme', productCode: 'DQY', decisionDate: '2024-01-02', reviewDays: 30 });
  const backend: McpBackend = {
    async query(operation, input): Promise<Answer> {
      asked.push(`${operation} ${JSON.stringify(input)}`);
      if (operation === 'device-510k.detail') {
        const id = String(input.id);
        if (id === 'K000000') return { status: 404, body: { version: 1, operation, error: { code: 'record_not_found', message: `No record has the id ${id}.`, details: [] } } };
        return { status: 200, body: { version: 1, operation, data: { record: record(id) } } };
      }
      if (operation === 'device-510k.search') {
        const items = ['K100001', 'K100002', 'K100003'].map(record);
        return { status: 200, body: { version: 1, operation, data: { items }, page: { total: 3, hasNextPage: false }, facets: [] } };
      }
      throw new Error(`not asked in these tests: ${operation}`);
    },
    async changes() {
      throw new Error('not asked in these tests');
    },
  };
  return { backend, asked };
}
