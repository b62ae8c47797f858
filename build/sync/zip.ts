import { unzipSync } from 'fflate';

/**
 * Reads a zip and checks it whole: the central directory must be there (a truncated download loses it first), every
 * entry must inflate, and each entry's CRC-32 and size must match the directory. fflate inflates but does not check
 * CRCs, so that part is done here.
 */
export type ZipEntry = { name: string; bytes: Uint8Array };

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;

type DirectoryEntry = { name: string; crc: number; size: number };

export function readZip(bytes: Uint8Array): ZipEntry[] {
  const directory = centralDirectory(bytes);
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (err) {
    throw new Error(`the zip does not inflate (${(err as Error).message})`);
  }
  return directory
    .filter((d) => !d.name.endsWith('/'))
    .map((d) => {
      const data = entries[d.name];
      if (!data) throw new Error(`the zip lists ${d.name} but holds no data for it`);
      // 0xFFFFFFFF marks a ZIP64 size, which the 32-bit field cannot hold: the CRC still decides.
      if (d.size !== 0xffffffff && data.byteLength !== d.size) {
        throw new Error(`${d.name} inflates to ${data.byteLength} bytes where the zip says ${d.size}`);
      }
      if (crc32(data) !== d.crc) throw new Error(`${d.name} fails its CRC-32 check`);
      return { name: d.name, bytes: data };
    });
}

function centralDirectory(bytes: Uint8Array): DirectoryEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record is 22 bytes plus a comment of at most 65,535.
  let eocd = -1;
  for (let i = bytes.byteLength - 22; i >= Math.max(0, bytes.byteLength - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a complete zip: no end-of-central-directory record (truncated?)');
  const count = view.getUint16(eocd + 10, true);
  const size = view.getUint32(eocd + 12, true);
  let offset = view.getUint32(eocd + 16, true);
  if (offset + size > eocd) throw new Error('not a complete zip: the central directory lies past the end record');
  const out: DirectoryEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (offset + 46 > eocd || view.getUint32(offset, true) !== CENTRAL) throw new Error('not a complete zip: damaged central directory');
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    out.push({
      crc: view.getUint32(offset + 16, true),
      size: view.getUint32(offset + 24, true),
      name: Buffer.from(bytes.subarray(offset + 46, offset + 46 + nameLength)).toString('latin1'),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

let table: Uint32Array | null = null;

export function crc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = (table[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
