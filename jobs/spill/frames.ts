import { hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { blockTexts } from '../routing/stream-entries';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/**
 * Records on disk in frames, as the disk spool (jobs/spill/spool.ts) and the archive (jobs/history/archive-files.ts)
 * keep them. A frame: its magic (`TSP` and the format's version), meta length (u16), payload length
 * (u32), checksum (first 8 bytes of SHA-256 over meta and payload), meta (JSON: first and last
 * record id, record count), payload. Frames are appended and fsynced one at a time, so a crash can
 * only tear the last one.
 *
 * - `TSP1`: the payload is one raw deflate of `<record id>\t<record JSON>\n` lines (JSON.stringify
 *   never writes a raw tab or newline).
 * - `TSP2`: the payload is parts, in id order, each a tag byte then:
 *   `L` (lines): u32 length, then a TSP1 payload;
 *   `B` (block): u8 length and the text of a stream entry's id, u32 record count, u32 length, then
 *   the entry's `b1` block byte for byte (jobs/routing/stream-entries.ts); its records are
 *   `<entry id>#<k>`, as in the stream. The archive keeps large blocks so rather than inflating
 *   and deflating every record again (13 µs a record of the worker's CPU, bench/RESULTS.md).
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

/** A stream entry's `b1` block, kept as it is: its records are `<entryId>#0` to `<entryId>#<count − 1>`. */
export interface FramedBlock {
  entryId: string;
  count: number;
  /** The block's deflated bytes. */
  bytes: Buffer;
}

/** What a `TSP2` frame holds, in id order: records as lines, or a stream entry's block as it is. */
export type FramePart = { lines: readonly FramedEntry[] } | { block: FramedBlock };

/** `TSP` and the format's version; a later format is read beside these. */
const MAGIC_LINES = Buffer.from('TSP1');
const MAGIC_PARTS = Buffer.from('TSP2');
const READS = `${MAGIC_LINES.toString('latin1')} and ${MAGIC_PARTS.toString('latin1')}`;
const HEADER_BYTES = 4 + 2 + 4 + 8;
const TAG_LINES = 0x4c;
const TAG_BLOCK = 0x42;

const checksum = (meta: Buffer, payload: Buffer) => hash('sha256', Buffer.concat([meta, payload]), 'buffer').subarray(0, 8);

/** Entries turned into text, or out of blocks, between two turns of the event loop (see DECODE_SLICE_RECORDS in stream-read.ts). */
const ENCODE_SLICE_ENTRIES = 500;

/** The lines payload of `entries`: deflated off the event loop, their text made a slice at a time. */
async function linesPayload(entries: readonly FramedEntry[]): Promise<Buffer> {
  const text: Buffer[] = [];
  for (let i = 0; i < entries.length; i += ENCODE_SLICE_ENTRIES) {
    if (i > 0) await nextTurn();
    text.push(Buffer.from(entries.slice(i, i + ENCODE_SLICE_ENTRIES).map((e) => `${e.id}\t${e.json}\n`).join('')));
  }
  return deflate(text.length === 1 ? text[0]! : Buffer.concat(text));
}

function frameBytes(magic: Buffer, meta: { first: string; last: string; count: number }, payload: Buffer): Buffer {
  const metaBytes = Buffer.from(JSON.stringify(meta));
  const header = Buffer.alloc(HEADER_BYTES);
  magic.copy(header, 0);
  header.writeUInt16BE(metaBytes.length, 4);
  header.writeUInt32BE(payload.length, 6);
  checksum(metaBytes, payload).copy(header, 10);
  return Buffer.concat([header, metaBytes, payload]);
}

/** The bytes of one `TSP1` frame holding `entries` (at least one, in id order). */
export async function encodeFrame(entries: readonly FramedEntry[]): Promise<Buffer> {
  return frameBytes(MAGIC_LINES, { first: entries[0]!.id, last: entries[entries.length - 1]!.id, count: entries.length }, await linesPayload(entries));
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

const partFirstId = (part: FramePart): string => ('block' in part ? `${part.block.entryId}#0` : part.lines[0]!.id);
const partLastId = (part: FramePart): string => ('block' in part ? `${part.block.entryId}#${part.block.count - 1}` : part.lines.at(-1)!.id);
const partCount = (part: FramePart): number => ('block' in part ? part.block.count : part.lines.length);

/** The first and last record ids of `parts` (at least one, none empty, in id order), and how many records they hold. */
export function partsSpan(parts: readonly FramePart[]): { first: string; last: string; count: number } {
  return { first: partFirstId(parts[0]!), last: partLastId(parts.at(-1)!), count: parts.reduce((n, p) => n + partCount(p), 0) };
}

/** The bytes of one `TSP2` frame holding `parts` (at least one, none empty, in id order). */
export async function encodePartsFrame(parts: readonly FramePart[]): Promise<Buffer> {
  const bytes: Buffer[] = [];
  for (const part of parts) {
    if ('block' in part) {
      const id = Buffer.from(part.block.entryId, 'latin1');
      bytes.push(Buffer.from([TAG_BLOCK, id.length]), id, u32(part.block.count), u32(part.block.bytes.length), part.block.bytes);
    } else {
      const payload = await linesPayload(part.lines);
      bytes.push(Buffer.from([TAG_LINES]), u32(payload.length), payload);
    }
  }
  return frameBytes(MAGIC_PARTS, partsSpan(parts), Buffer.concat(bytes));
}

function linesOf(text: string): FramedEntry[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      return { id: line.slice(0, tab), json: line.slice(tab + 1) };
    });
}

/** The records of a `TSP2` payload; `where` names the frame in errors. */
async function partsOf(payload: Buffer, where: string): Promise<FramedEntry[]> {
  const out: FramedEntry[] = [];
  let at = 0;
  let sinceTurn = 0;
  const cut = () => new FrameCorruptError(`the frame at ${where} holds a part cut short at byte ${at}`);
  while (at < payload.length) {
    // Blocks are inflated on the event loop: a frame of 5 000 records gives it back between them.
    if (out.length - sinceTurn >= ENCODE_SLICE_ENTRIES) {
      await nextTurn();
      sinceTurn = out.length;
    }
    const tag = payload[at]!;
    if (tag === TAG_LINES) {
      if (at + 5 > payload.length) throw cut();
      const length = payload.readUInt32BE(at + 1);
      if (at + 5 + length > payload.length) throw cut();
      out.push(...linesOf((await inflate(payload.subarray(at + 5, at + 5 + length))).toString('utf8')));
      at += 5 + length;
    } else if (tag === TAG_BLOCK) {
      const idLength = payload[at + 1] ?? 0;
      const head = at + 2 + idLength + 8;
      if (head > payload.length) throw cut();
      const entryId = payload.toString('latin1', at + 2, at + 2 + idLength);
      const count = payload.readUInt32BE(at + 2 + idLength);
      const length = payload.readUInt32BE(at + 6 + idLength);
      if (head + length > payload.length) throw cut();
      const texts = blockTexts(payload.subarray(head, head + length));
      if (texts.length !== count) throw new FrameCorruptError(`the frame at ${where} holds a block of ${texts.length} records that says ${count}`);
      texts.forEach((json, k) => out.push({ id: `${entryId}#${k}`, json }));
      at = head + length;
    } else throw new FrameCorruptError(`the frame at ${where} holds a part of unknown kind ${tag} at byte ${at}`);
  }
  return out;
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
    const magic = buf.subarray(0, 4);
    if (magic.equals(MAGIC_PARTS)) return await partsOf(payload, `${file}:${span.offset}`);
    if (!magic.equals(MAGIC_LINES)) throw notAFrame(file, span.offset, buf);
    return linesOf((await inflate(payload)).toString('utf8'));
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
      const magic = header.subarray(0, 4);
      if (!magic.equals(MAGIC_LINES) && !magic.equals(MAGIC_PARTS)) throw notAFrame(file, offset, header);
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
  if (/^TSP[3-9]$/.test(magic)) return new FrameVersionError(`${file} holds a frame of format ${magic} at byte ${offset}, written by a later Tributary; this one reads ${READS}. The file is left as it is: run the later version to read it.`);
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
