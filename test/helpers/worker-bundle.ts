/** The platform's limit on a Worker, compressed (paid plan 10 MB; the free plan's 3 MB is the one kept). */
export const MAX_COMPRESSED_BYTES = 3 * 1024 * 1024;
/** Any import or require of a Node module, in the forms a bundle can hold. */
export const NODE_IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["']node:[\w/]+["']/;
