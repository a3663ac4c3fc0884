import { mkdir, open, readdir, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { encodeFrame, FrameCorruptError, readFrame, scanFrames, syncDirectory, type FramedEntry, type FrameSpan } from './frames';
import { compareStreamIds } from '../delivery/keys';

/** One queued record as the stream held it: its stream id and its JSON text. */
export type SpooledEntry = FramedEntry;

/** Where one frame sits (which segment, where in it) and what it holds. */
interface Frame extends FrameSpan {
  segment: number;
}

/** What a spool holds past the delivery cursor. */
export interface SpoolBacklog {
  records: number;
  /** Bytes of the frames that hold them, compressed, on disk. */
  bytes: number;
  /** Stream id (and so arrival time) of the oldest of them. */
  oldestId: string | null;
}

/** A spool segment damaged other than by a crash (see jobs/spill/frames.ts). */
export { FrameCorruptError as SpoolCorruptError };

/** A segment takes frames until it passes this size; a fully delivered segment is deleted whole. */
const SEGMENT_BYTES = 64 * 1024 * 1024;

const segmentName = (n: number) => `seg-${String(n).padStart(10, '0')}.spool`;
const segmentNumber = (name: string) => (/^seg-(\d{10})\.spool$/.exec(name) ? Number(name.slice(4, 14)) : undefined);

/**
 * One destination's records on disk, oldest first: what the delivery stream held beyond its cap,
 * moved out of Redis in frames (see jobs/spill/spiller.ts) and read back by the delivery loop before the
 * stream. Append-only segment files under `DATA_DIR/spool/<tracker>/<destination>/`, each frame
 * checksummed, compressed and fsynced before Redis lets go of its records.
 *
 * Redis stays the judge of what is committed: a frame counts once Redis' `spilled` id covers it.
 * On open, frames past that id (written, then the process died before Redis agreed) and a torn
 * last frame are cut off, and segments the cursor has passed are deleted. Every operation runs in
 * turn, so the spiller's appends and the delivery loop's reads never interleave.
 */
export class Spool {
  private readonly frames: Frame[] = [];
  private writeHandle: { segment: number; fh: FileHandle; size: number } | undefined;
  private decoded: { frame: Frame; entries: SpooledEntry[] } | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  /** The highest segment number on disk: a new segment takes the next one. */
  private lastSegment = 0;
  private closed = false;

  /** Redis' `spilled` id as last agreed: the spiller's next frame must follow it. */
  committedThrough: string | null = null;

  private constructor(readonly dir: string) {}

  /**
   * Opens (or creates) the spool in `dir`, keeping only frames up to `committedThrough` (Redis'
   * `spilled` id; null: none) and dropping segments at or below `deliveredThrough` (the cursor).
   */
  static async open(dir: string, committedThrough: string | null, deliveredThrough: string): Promise<Spool> {
    const spool = new Spool(dir);
    spool.committedThrough = committedThrough;
    await mkdir(dir, { recursive: true });
    const segments = (await readdir(dir)).map(segmentNumber).filter((n): n is number => n !== undefined).sort((a, b) => a - b);
    let cut = false;
    for (const [at, segment] of segments.entries()) {
      const file = path.join(dir, segmentName(segment));
      if (cut) {
        await rm(file, { force: true });
        continue;
      }
      spool.lastSegment = segment;
      const scanned = await scanFrames(file);
      const { validBytes, torn } = scanned;
      const frames = scanned.frames.map((f) => ({ ...f, segment }));
      // A frame is fsynced before Redis is told of it: only the newest one can be torn by a crash.
      if (torn && at < segments.length - 1) throw new FrameCorruptError(`${file} is damaged at byte ${validBytes}, before the spool's last segment`);
      const keep = frames.filter((f) => committedThrough !== null && compareStreamIds(f.lastId, committedThrough) <= 0);
      if (keep.length < frames.length || torn) {
        cut = true;
        const end = keep.length > 0 ? keep[keep.length - 1]!.offset + keep[keep.length - 1]!.size : 0;
        await truncate(file, Math.min(end, validBytes));
      }
      spool.frames.push(...keep);
      if (keep.length === 0) await rm(file, { force: true });
    }
    await spool.dropSegmentsThrough(deliveredThrough);
    return spool;
  }

  /** The last stream id on disk (committed or being committed), or null when empty. */
  get lastId(): string | null {
    return this.frames.length > 0 ? this.frames[this.frames.length - 1]!.lastId : null;
  }

  /** What is on disk past `cursor`. */
  backlog(cursor: string): SpoolBacklog {
    let records = 0;
    let bytes = 0;
    let oldestId: string | null = null;
    for (const f of this.frames) {
      if (compareStreamIds(f.lastId, cursor) <= 0) continue;
      // A frame the cursor is inside of counts whole: close enough for a status view.
      records += f.count;
      bytes += f.size;
      oldestId ??= compareStreamIds(f.firstId, cursor) > 0 ? f.firstId : cursor;
    }
    return { records, bytes, oldestId };
  }

  /** True when any frame is on disk, delivered or not. */
  get hasData(): boolean {
    return this.frames.length > 0;
  }

  /** Runs `fn` in turn with the spool's own operations (see Spiller and DeliveryLoop.confirm). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.inTurn(fn);
  }

  /**
   * One spill step in one turn, so that no delivery confirmation falls between its read and its
   * commit: `read` picks the records, they are appended as one frame and fsynced, then `commit`
   * tells Redis. If `commit` fails the spool no longer knows what Redis holds: it closes, to be
   * opened again. Returns the records spilled.
   */
  spillFrame(read: () => Promise<SpooledEntry[]>, commit: (entries: SpooledEntry[]) => Promise<void>): Promise<number> {
    return this.inTurn(async () => {
      const entries = await read();
      if (entries.length === 0) return 0;
      await this.appendFrame(entries);
      try {
        await commit(entries);
      } catch (err) {
        this.closed = true;
        await this.writeHandle?.fh.close().catch(() => undefined);
        this.writeHandle = undefined;
        throw err;
      }
      return entries.length;
    });
  }

  /** True when records past `cursor` are on disk: the delivery loop reads them before the stream. */
  hasAfter(cursor: string): boolean {
    const last = this.lastId;
    return last !== null && compareStreamIds(last, cursor) > 0;
  }

  /** Appends one frame and fsyncs it (tests; the spiller uses spillFrame). */
  append(entries: readonly SpooledEntry[]): Promise<void> {
    return this.inTurn(() => this.appendFrame(entries));
  }

  private async appendFrame(entries: readonly SpooledEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const last = this.lastId;
    if (last !== null && compareStreamIds(entries[0]!.id, last) <= 0) throw new Error(`spool append out of order: ${entries[0]!.id} after ${last}`);
    const frame = await encodeFrame(entries);
    const w = await this.writable();
    await w.fh.write(frame, 0, frame.length, w.size);
    await w.fh.sync();
    this.frames.push({ segment: w.segment, offset: w.size, size: frame.length, firstId: entries[0]!.id, lastId: entries[entries.length - 1]!.id, count: entries.length });
    w.size += frame.length;
  }

  /** Up to `max` records past `cursor`, oldest first. */
  readAfter(cursor: string, max: number): Promise<SpooledEntry[]> {
    return this.inTurn(async () => {
      const out: SpooledEntry[] = [];
      for (const frame of this.frames) {
        if (out.length >= max) break;
        if (compareStreamIds(frame.lastId, cursor) <= 0) continue;
        for (const e of await this.decode(frame)) {
          if (out.length >= max) break;
          if (compareStreamIds(e.id, cursor) > 0) out.push(e);
        }
      }
      return out;
    });
  }

  /** Deletes the segments whose every record is at or below `cursor` (delivered). */
  dropThrough(cursor: string): Promise<void> {
    return this.inTurn(() => this.dropSegmentsThrough(cursor));
  }

  async close(): Promise<void> {
    await this.inTurn(async () => {
      this.closed = true;
      await this.writeHandle?.fh.close();
      this.writeHandle = undefined;
    });
  }

  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(() => {
      if (this.closed) throw new Error('the spool is closed');
      return fn();
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async writable(): Promise<{ segment: number; fh: FileHandle; size: number }> {
    if (this.writeHandle && this.writeHandle.size < SEGMENT_BYTES) return this.writeHandle;
    let segment = this.lastSegment;
    if (this.writeHandle) {
      await this.writeHandle.fh.close();
      this.writeHandle = undefined;
      segment++;
    } else if (segment === 0 || !this.frames.some((f) => f.segment === segment)) {
      segment++;
    }
    const fh = await open(path.join(this.dir, segmentName(segment)), 'a');
    const { size } = await fh.stat();
    if (size === 0) await syncDirectory(this.dir);
    this.lastSegment = segment;
    this.writeHandle = { segment, fh, size };
    return this.writeHandle;
  }

  private async decode(frame: Frame): Promise<SpooledEntry[]> {
    if (this.decoded?.frame === frame) return this.decoded.entries;
    const entries = await readFrame(path.join(this.dir, segmentName(frame.segment)), frame);
    this.decoded = { frame, entries };
    return entries;
  }

  private async dropSegmentsThrough(cursor: string): Promise<void> {
    const bySegment = new Map<number, string>();
    for (const f of this.frames) bySegment.set(f.segment, f.lastId);
    for (const [segment, lastId] of bySegment) {
      if (compareStreamIds(lastId, cursor) > 0) continue;
      if (this.writeHandle?.segment === segment) {
        await this.writeHandle.fh.close();
        this.writeHandle = undefined;
      }
      await rm(path.join(this.dir, segmentName(segment)), { force: true });
      for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i]!.segment === segment) this.frames.splice(i, 1);
    }
    if (this.decoded && !this.frames.includes(this.decoded.frame)) this.decoded = undefined;
  }
}

/** A destination's spool directory under DATA_DIR. */
export function spoolDirectory(dataDir: string, trackerId: string, destinationId: string, partition = 0): string {
  // Partition 0 keeps the historical name; another's is a sibling (`<destination>.p<n>`), never a subdirectory of it.
  return path.join(dataDir, 'spool', trackerId, partition ? `${destinationId}.p${partition}` : destinationId);
}
