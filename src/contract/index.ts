export * from './record.ts';
export * from './classification.ts';
export * from './operations.ts';
export * from './envelope.ts';
export * from './snapshot.ts';
export * from './changes.ts';
export * from './sync.ts';
export * from './fast-input.ts';
