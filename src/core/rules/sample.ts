import type { TrackedRecord } from '../records/types';

/**
 * Deterministic sampling: a record is in when the hash of its `by` value falls below the rate, so
 * every record of one user (or session, or whatever `by` names) is in or out together, in every
 * process and on every run. The hash is 32-bit FNV-1a over the value's text, finished with
 * MurmurHash3's mixer so that ids differing in their last character (`user-1`, `user-2`) spread over
 * the whole range: not for secrecy, only for spreading ids evenly, and cheap (well under a
 * microsecond for an id).
 */

/** The value a record is sampled by: the reserved field or property `by`; without it, `_id`. */
export function sampleKey(record: TrackedRecord, by: string | undefined): string {
  switch (by ?? '_uid') {
    case '_uid':
      return record.uid ?? record.id;
    case '_sid':
      return record.sid ?? record.id;
    case '_id':
      return record.id;
    case '_event':
      return record.event ?? record.id;
    default: {
      const value = Object.hasOwn(record.properties, by!) ? record.properties[by!] : undefined;
      return value === undefined || value === null ? record.id : typeof value === 'string' ? value : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    }
  }
}

/** FNV-1a (32 bits) of a string's UTF-16 code units, mixed, as a fraction in [0, 1). */
export function sampleFraction(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 0x1_0000_0000;
}

export function sampledIn(record: TrackedRecord, rate: number, by: string | undefined): boolean {
  return rate >= 1 || sampleFraction(sampleKey(record, by)) < rate;
}
