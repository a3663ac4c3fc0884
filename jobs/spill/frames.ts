import { hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { deflateRaw, inflateRaw } from 'node:zlib';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/**
 * Records on disk in frames, as the disk spool (jobs/spill/spool.ts) and the archive (jobs/history/archive-files.ts)
 * keep them. A frame: MAGIC, meta length (u16), payload length (u32), checksum (first 8 bytes of
 * SHA-256 over meta and payload), meta (JSON: first and last record id, record count), payload (raw
 * deflate of `<record id>\t<record JSON>\n` lines; JSON.stringify never writes a raw tab or
 * newline). Frames are appended and fsynced one at a time, so a crash can only tear the last one.
 */

/** One record: its stream id (the order it was accepted in) and its JSON text. */
export interface FramedEntry {
  id: string;
  json: string;
}

/** Where one frame sits in its file and what it holds. */
export interface FrameSpan {
  offset: number;
  /** Header, meta and payload. */
  size: number;
  firstId: string;
  lastId: string;
  count: number;
}

export class FrameCorruptError extends Error {
  override name = 'FrameCorruptError';
}

/** A frame of a later format than this relay reads (its magic's version): the file is left as it is. */
export class FrameVersionError extends FrameCorruptError {
  override name = 'FrameVersionError';
}

/** `TSP` and the format's version: a later format is `TSP2`, read beside this one. */
const MAGIC = Buffer.from('TSP1');
const HEADER_BYTES = 4 + 2 + 4 + 8;

const checksum = (meta: Buffer, payload: Buffer) => hash('sha256', Buffer.concat([meta, payload]), 'buffer').subarray(0, 8);

/** Entries turned into text between two turns of the event loop (see DECODE_SLICE_RECORDS in stream-read.ts). */
const ENCODE_SLICE_ENTRIES = 500;

/** The bytes of one frame holding `entries` (at least one, in id order). */
export async function encodeFrame(entries: readonly FramedEntry[]): Promise<Buffer> {
  const text: Buffer[] = [];
  for (let i = 0; i < entries.length; i += ENCODE_SLICE_ENTRIES) {
    if (i > 0) await nextTurn();
    text.push(Buffer.from(entries.slice(i, i + ENCODE_SLICE_ENTRIES).map((e) => `${e.id}\t${e.json}\n`).join('')));
  }
  const payload = await deflate(text.length === 1 ? text[0]! : Buffer.concat(text));
  const meta = Buffer.from(JSON.stringify({ first: entries[0]!.id, last: entries[entries.length - 1]!.id, count: entries.length }));
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt16BE(meta.length, 4);
  header.writeUInt32BE(payload.length, 6);
  checksum(meta, payload).copy(header, 10);
  return Buffer.concat([header, meta, payload]);
}

/** The records of the frame at `span` of `file`. */
export async function readFrame(file: string, span: Pick<FrameSpan, 'offset' | 'size'>): Promise<FramedEntry[]> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(span.size);
    const { bytesRead } = await fh.read(buf, 0, span.size, span.offset);
    if (bytesRead !== span.size) throw new FrameCorruptError(`the frame at ${file}:${span.offset} is cut short`);
    const metaLength = buf.readUInt16BE(4);
    const meta = buf.subarray(HEADER_BYTES, HEADER_BYTES + metaLength);
    const payload = buf.subarray(HEADER_BYTES + metaLength);
    if (!checksum(meta, payload).equals(buf.subarray(10, 18))) throw new FrameCorruptError(`the frame at ${file}:${span.offset} fails its checksum`);
    const text = (await inflate(payload)).toString('utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf('\t');
        return { id: line.slice(0, tab), json: line.slice(tab + 1) };
      });
  } finally {
    await fh.close();
  }
}

/**
 * The frames of one file, up to a torn last one (cut short, or failing its checksum at the very
 * end). Damage anywhere else is not what a crash leaves: FrameCorruptError.
 */
export async function scanFrames(file: string): Promise<{ frames: FrameSpan[]; validBytes: number; torn: boolean }> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const frames: FrameSpan[] = [];
    let offset = 0;
    const header = Buffer.alloc(HEADER_BYTES);
    while (offset < size) {
      if (size - offset < HEADER_BYTES) return { frames, validBytes: offset, torn: true };
      await fh.read(header, 0, HEADER_BYTES, offset);
      if (!header.subarray(0, 4).equals(MAGIC)) throw notAFrame(file, offset, header);
      const metaLength = header.readUInt16BE(4);
      const payloadLength = header.readUInt32BE(6);
      const frameSize = HEADER_BYTES + metaLength + payloadLength;
      if (offset + frameSize > size) return { frames, validBytes: offset, torn: true };
      const body = Buffer.alloc(metaLength + payloadLength);
      await fh.read(body, 0, body.length, offset + HEADER_BYTES);
      const meta = body.subarray(0, metaLength);
      if (!checksum(meta, body.subarray(metaLength)).equals(header.subarray(10, 18))) {
        // A write cut short by a crash leaves the file's last bytes wrong, never a frame with more after it.
        if (offset + frameSize < size) throw new FrameCorruptError(`${file} is damaged at byte ${offset}: the frame there fails its checksum`);
        return { frames, validBytes: offset, torn: true };
      }
      const { first, last, count } = JSON.parse(meta.toString('utf8')) as { first: string; last: string; count: number };
      frames.push({ offset, size: frameSize, firstId: first, lastId: last, count });
      offset += frameSize;
    }
    return { frames, validBytes: offset, torn: false };
  } finally {
    await fh.close();
  }
}

function notAFrame(file: string, offset: number, header: Buffer): FrameCorruptError {
  const magic = header.subarray(0, 4).toString('latin1');
  if (/^TSP[2-9]$/.test(magic)) return new FrameVersionError(`${file} holds a frame of format ${magic} at byte ${offset}, written by a later Tributary; this one reads ${MAGIC.toString('latin1')}. The file is left as it is: run the later version to read it.`);
  return new FrameCorruptError(`${file} is damaged at byte ${offset}: no frame starts there`);
}

/** Makes a new file's name durable: without it, a crash may lose the file though its data was synced. */
export async function syncDirectory(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
