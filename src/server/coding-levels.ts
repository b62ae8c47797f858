import { constants } from 'node:zlib';

/** How hard answers are compressed, by size: quick settings, since an answer is compressed as it is sent. */
export const brotliOptions = (size: number) => ({
  params: {
    // Quality 4 compresses JSON about as well as gzip -9 at a fraction of quality 11's cost; past 64 KiB (catalog
    // pages) quality 2, for answers a little larger in a fraction of the time.
    [constants.BROTLI_PARAM_QUALITY]: size > 64 * 1024 ? 2 : 4,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: size,
    // A window no larger than the answer: the default 4 MiB window costs memory for every answer compressed at once.
    [constants.BROTLI_PARAM_LGWIN]: Math.max(constants.BROTLI_MIN_WINDOW_BITS + 6, Math.min(constants.BROTLI_DEFAULT_WINDOW, Math.ceil(Math.log2(size + 1)))),
  },
});

/**
 * gzip's level by size, as br's quality: the default (6) for most answers; level 1 past 64 KiB, where JSON's long
 * repeats make it a few percent larger at a fraction of the time.
 */
export const gzipOptions = (size: number) => ({ level: size > 64 * 1024 ? 1 : constants.Z_DEFAULT_COMPRESSION });
