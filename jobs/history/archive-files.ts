import { mkdir, open, readdir, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { encodePartsFrame, partsSpan, readFrame, scanFrames, syncDirectory, type FramedEntry, type FramePart } from '../spill/frames';
import { compareStreamIds, streamIdTime } from '../delivery/keys';

/**
 * One tracker partition's archive on disk: what it accepted, as accepted, in frames (jobs/spill/frames.ts)
 * appended to segment files named by the UTC day of their first record, `2026-11-28.0000.arch`. A
 * segment takes the records of its day (a new one starts with the first record of the next day,
 * or past SEGMENT_BYTES), so retention deletes whole days and a time range is read from the
 * segments of its days only. Nothing is kept in memory but the segment being written.
 *
 * Redis is the judge of what is archived (its `archived` id, jobs/history/archiver.ts): on open, frames
 * past that id (appended, then the process died before Redis agreed) and a torn last frame are cut
 * off. Frames are fsynced one at a time, so only the newest segment can hold either.
 */

/** A segment takes frames until it passes this size; then the day goes on in the next one. */
const SEGMENT_BYTES = 256 * 1024 * 1024;

const SEGMENT = /^(\d{4}-\d{2}-\d{2})\.(\d{4})\.arch$/;

interface Segment {
  name: string;
  day: string;
  seq: number;
}

function parseSegment(name: string): Segment | undefined {
  const m = SEGMENT.exec(name);
  return m ? { name, day: m[1]!, seq: Number(m[2]) } : undefined;
}

const segmentName = (day: string, seq: number) => `${day}.${String(seq).padStart(4, '0')}.arch`;

/** The UTC day (`2026-11-28`) of a record id (`<ms>-<seq>` or `<ms>-<seq>#<k>`). */
export function dayOfId(id: string): string {
  return new Date(streamIdTime(id)).toISOString().slice(0, 10);
}

/** What an archive holds on disk. */
export interface ArchiveSize {
  bytes: number;
  segments: number;
  /** The day of the oldest segment; null when empty. */
  oldestDay: string | null;
}

export class ArchiveFiles {
  private writing: { segment: Segment; fh: FileHandle; size: number } | undefined;
  /** The last record id on disk. */
  lastId: string | null = null;

  private constructor(readonly dir: string) {}

  /**
   * Opens (or creates) the archive in `dir`, cutting off what Redis says is not archived: frames
   * past `committedThrough`. Null means Redis knows of nothing archived (a first start, or a Redis
   * that lost its data): the files are kept as they are, since history is what they are for, and
   * the archiver goes on after their last record.
   */
  static async open(dir: string, committedThrough: string | null): Promise<ArchiveFiles> {
    const files = new ArchiveFiles(dir);
    await mkdir(dir, { recursive: true });
    const segments = await files.segments();
    // Newest first: a frame Redis did not agree to can only be in the newest segments.
    for (let i = segments.length - 1; i >= 0; i--) {
      const file = path.join(dir, segments[i]!.name);
      const { frames, validBytes, torn } = await scanFrames(file);
      const keep = committedThrough === null ? frames : frames.filter((f) => compareStreamIds(f.lastId, committedThrough) <= 0);
      if (keep.length < frames.length || torn) {
        const end = keep.length > 0 ? keep.at(-1)!.offset + keep.at(-1)!.size : 0;
        if (end === 0) await rm(file, { force: true });
        else await truncate(file, Math.min(end, validBytes));
      }
      if (keep.length > 0) {
        files.lastId = keep.at(-1)!.lastId;
        break;
      }
    }
    return files;
  }

  /** Appends one frame of `parts` (none empty, after `lastId`, in id order) and fsyncs it. */
  async append(parts: readonly FramePart[]): Promise<void> {
    if (parts.length === 0) return;
    const { first, last } = partsSpan(parts);
    if (this.lastId !== null && compareStreamIds(first, this.lastId) <= 0) throw new Error(`archive append out of order: ${first} after ${this.lastId}`);
    const frame = await encodePartsFrame(parts);
    const w = await this.writable(dayOfId(first));
    await w.fh.write(frame, 0, frame.length, w.size);
    await w.fh.sync();
    w.size += frame.length;
    this.lastId = last;
  }

  /**
   * The records with ids in [since, until], oldest first, a frame at a time: only the segments
   * whose days can hold them are read. A frame being appended meanwhile is not read (torn).
   */
  async *read(since: string, until?: string): AsyncGenerator<FramedEntry[]> {
    const segments = await this.segments();
    // The segment of `since`'s day may start after it: the last one that starts before it is read too.
    let from = segments.findIndex((s) => s.day > dayOfId(since));
    from = from < 0 ? segments.length - 1 : Math.max(0, from - 1);
    for (const segment of segments.slice(from)) {
      if (until !== undefined && segment.day > dayOfId(until)) return;
      const file = path.join(this.dir, segment.name);
      const { frames } = await scanFrames(file).catch(() => ({ frames: [] }));
      for (const frame of frames) {
        if (compareStreamIds(frame.lastId, since) < 0) continue;
        if (until !== undefined && compareStreamIds(frame.firstId, until) > 0) return;
        const entries = (await readFrame(file, frame)).filter((e) => compareStreamIds(e.id, since) >= 0 && (until === undefined || compareStreamIds(e.id, until) <= 0));
        if (entries.length > 0) yield entries;
      }
    }
  }

  /** Deletes the segments of the days before `day` (retention); returns how many. */
  async deleteDaysBefore(day: string): Promise<number> {
    let deleted = 0;
    for (const segment of await this.segments()) {
      if (segment.day >= day) break;
      if (this.writing?.segment.name === segment.name) await this.closeWriting();
      await rm(path.join(this.dir, segment.name), { force: true });
      deleted++;
    }
    return deleted;
  }

  async size(): Promise<ArchiveSize> {
    const segments = await this.segments();
    let bytes = 0;
    for (const s of segments) bytes += (await stat(path.join(this.dir, s.name)).catch(() => ({ size: 0 }))).size;
    return { bytes, segments: segments.length, oldestDay: segments[0]?.day ?? null };
  }

  async close(): Promise<void> {
    await this.closeWriting();
  }

  private async segments(): Promise<Segment[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names
      .map(parseSegment)
      .filter((s): s is Segment => s !== undefined)
      .sort((a, b) => (a.day === b.day ? a.seq - b.seq : a.day < b.day ? -1 : 1));
  }

  /** The segment for a frame whose first record is of `day`: the one being written, or a new one. */
  private async writable(day: string): Promise<{ segment: Segment; fh: FileHandle; size: number }> {
    const w = this.writing;
    if (w && w.segment.day === day && w.size < SEGMENT_BYTES) return w;
    if (!w) {
      // After a restart: the newest segment goes on if it is of this day and has room.
      const newest = (await this.segments()).at(-1);
      if (newest && newest.day === day) {
        const fh = await open(path.join(this.dir, newest.name), 'a');
        const { size } = await fh.stat();
        if (size < SEGMENT_BYTES) return (this.writing = { segment: newest, fh, size });
        await fh.close();
      }
    }
    await this.closeWriting();
    const sameDay = (await this.segments()).filter((s) => s.day === day);
    const segment = { day, seq: sameDay.length > 0 ? sameDay.at(-1)!.seq + 1 : 0, name: '' };
    segment.name = segmentName(day, segment.seq);
    const fh = await open(path.join(this.dir, segment.name), 'a');
    await syncDirectory(this.dir);
    return (this.writing = { segment, fh, size: 0 });
  }

  private async closeWriting(): Promise<void> {
    await this.writing?.fh.close();
    this.writing = undefined;
  }
}
