const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const BATCH = Buffer.from('"batch"');

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The size in bytes of each message of a batch as the client sent it: the spans of the elements of
 * the body's top-level `"batch"` array, found by one pass over the bytes (UTF-8 never puts an ASCII
 * byte inside a multi-byte character, so quotes, backslashes and brackets are found as bytes).
 * Segment's 32 KB a message is a limit on what was sent; serializing each parsed message again to
 * measure it cost 2.5 µs a message. Undefined when the body is not a batch this pass can read
 * (it was parsed already, so only an unusual spelling gets here, e.g. `"b\u0061tch"`): the
 * caller measures another way.
 */
export function batchMessageSizes(raw: Buffer): number[] | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = -1;
  /** At depth 1, the last key read and whether its value is the batch array. */
  let lastKeyIsBatch = false;
  let afterColon = false;
  let inBatch = false;
  let sizes: number[] | undefined;
  let elementStart = -1;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) {
        inString = false;
        if (depth === 1 && !afterColon) lastKeyIsBatch = i + 1 - stringStart === BATCH.length && raw.compare(BATCH, 0, BATCH.length, stringStart, i + 1) === 0;
      }
      continue;
    }
    if (inBatch && depth === 2 && elementStart === -1 && !isSpace(b) && b !== CLOSE_ARRAY && b !== COMMA) elementStart = i;
    switch (b) {
      case QUOTE:
        inString = true;
        stringStart = i;
        break;
      case COLON:
        if (depth === 1) afterColon = true;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        depth++;
        if (depth === 2 && afterColon && lastKeyIsBatch && b === OPEN_ARRAY) {
          inBatch = true;
          // A repeated "batch" key: the last one wins, as it does in JSON.parse.
          sizes = [];
          elementStart = -1;
        }
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (inBatch && depth === 2) {
          if (elementStart !== -1) sizes!.push(trimmedEnd(raw, i) - elementStart);
          inBatch = false;
          elementStart = -1;
        }
        depth--;
        if (depth === 1) afterColon = false;
        break;
      case COMMA:
        if (depth === 1) afterColon = false;
        else if (inBatch && depth === 2) {
          sizes!.push(trimmedEnd(raw, i) - elementStart);
          elementStart = -1;
        }
        break;
    }
  }
  return sizes;
}

/** The end of the element before `i` (a comma or the array's bracket), white space left out. */
function trimmedEnd(raw: Buffer, i: number): number {
  let end = i;
  while (end > 0 && isSpace(raw[end - 1]!)) end--;
  return end;
}
