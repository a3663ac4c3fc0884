/**
 * A UUIDv7 (RFC 9562): the time in its first 48 bits, so ids sort by creation as the relay's own
 * do. `crypto.getRandomValues`, not `randomUUID`: the latter exists only in secure contexts, and
 * many sites are still served over plain HTTP.
 */
export function uuidv7(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  let hex = '';
  for (const b of bytes) hex += (b + 256).toString(16).slice(1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
