import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { withoutStacksOnClose } from '../../src/server/pipelining.ts';

/**
 * A connection refused for pipelining too deep closes with hundreds of parsed requests, each ended by Node with an
 * error whose stack it formats: while that connection's 'close' listeners run, stack traces are off.
 */
describe('closing a refused connection', () => {
  it('makes the errors of its close listeners without stack frames, and puts the limit back after', () => {
    const socket = new Socket();
    const stacks: string[] = [];
    // Node's own listener comes first: it is added when the connection is accepted.
    socket.on('close', () => stacks.push(new Error('aborted').stack ?? ''));
    const before = Error.stackTraceLimit;
    withoutStacksOnClose(socket);
    socket.emit('close', false);
    expect(stacks).toEqual(['Error: aborted']);
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('later').stack).toMatch(/\n\s+at /);
  });

  it('leaves the errors of other connections as they are', () => {
    const refused = new Socket();
    const other = new Socket();
    const stacks: string[] = [];
    other.on('close', () => stacks.push(new Error('aborted').stack ?? ''));
    withoutStacksOnClose(refused);
    other.emit('close', false);
    expect(stacks[0]).toMatch(/\n\s+at /);
  });
});
