/**
 * Windows-1252 differs from Latin-1 only in 0x80–0x9F. Node 20's TextDecoder('windows-1252') decodes those bytes as
 * Latin-1 control characters (so ™ would come out as U+0099), hence this table (WHATWG encoding index; the five
 * undefined bytes map to themselves, as the WHATWG decoder does).
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
].map((cp) => String.fromCharCode(cp));

/** Decodes FDA's pipe files: Latin-1 for speed, then the 32 bytes where Windows-1252 differs. */
export function decodeCp1252(bytes: Uint8Array): string {
  return repairC1(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
}

/**
 * Maps C1 control characters (U+0080–U+009F) to what Windows-1252 means by those bytes. Used on Latin-1-decoded pipe
 * files, and on openFDA's JSON strings, some of which went through the same mix-up upstream ("GI Genius\u0099" where
 * FDA wrote "GI Genius™"): C1 controls never belong in this data.
 */
export function repairC1(text: string): string {
  return /[\u0080-\u009f]/.test(text) ? text.replace(/[\u0080-\u009f]/g, (ch) => CP1252_HIGH[ch.charCodeAt(0) - 0x80] as string) : text;
}
