// A Teltonika TCP frame for the JavaScript tests: the preamble, the length, the data and
// its CRC-16/IBM, as a device sends it (TELTONIKA_PROTOCOL.md).

/** CRC-16/IBM (reflected 0xA001, initial 0) of `buf`. */
export function crc16ibm(buf) {
  let crc = 0;
  for (const b of buf) {
    crc ^= b;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

/** `n` as `bytes` big-endian bytes (n may be a BigInt past 2^53). */
export function u(n, bytes) {
  const out = Buffer.alloc(bytes);
  let v = BigInt(n);
  for (let i = bytes - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

/** `data` framed: four zero bytes, its length, itself and its CRC. */
export const frame = (data) =>
  Buffer.concat([u(0, 4), u(data.length, 4), data, u(crc16ibm(data), 4)]);
