/** Header parsing lives with the API (src/api/media.ts); the server's static files read it from here too. */
export * from '../api/media.ts';
