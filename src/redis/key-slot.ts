/**
 * The Redis Cluster slot of a key (CRC16/XMODEM of the key, or of its hash tag, modulo 16,384), as
 * the cluster computes it: numbers whose keys share a slot can go in one lease call on a cluster.
 */

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ b) & 0xff]!;
  return crc;
}

const encoder = new TextEncoder();

/** Slot of `key`: only the part between the first `{` and the next `}` counts, when not empty. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(encoder.encode(key)) % 16384;
}
