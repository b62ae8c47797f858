import { NodeStorage } from '../../src/node/files.ts';

/**
 * A snapshot folder's storage that lists the path of every file read: every method that takes a file's path (whole
 * reads, ranges, reads that tell the file's identity) adds it to `reads`, in order.
 */
export function countingStorage(path: string): { storage: NodeStorage; reads: string[] } {
  const reads: string[] = [];
  const storage = new Proxy(new NodeStorage(path), {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof args[0] === 'string' && String(key).startsWith('read')) reads.push(args[0]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { storage, reads };
}
