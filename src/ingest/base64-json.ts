import { ApiError } from '../core/errors';
import { parseExactJson } from '../core/records/exact-json';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes the `data=` parameter: base64 in the standard or URL-safe alphabet, padded or not.
 * A `+` that reached us as a space (an unencoded query string) is read back as `+`.
 */
export function decodeBase64Json(input: string): unknown {
  const text = input.trim().replace(/ /g, '+');
  if (/^\s*[[{]/.test(input)) {
    throw new ApiError('ERR_MALFORMED_BASE64', 'The data parameter holds JSON text, not base64: encode the JSON with base64 (e.g. data=$(printf %s \'{"_event":"signup"}\' | base64)), or send each field as its own URL parameter.', 'data');
  }
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) {
    throw new ApiError('ERR_MALFORMED_BASE64', 'The data parameter is not valid base64 (standard or URL-safe alphabet).', 'data');
  }
  let json: string;
  try {
    json = utf8.decode(Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  } catch {
    throw new ApiError('ERR_MALFORMED_BASE64', 'The data parameter does not decode to UTF-8 text.', 'data');
  }
  try {
    return parseExactJson(json);
  } catch (err) {
    throw new ApiError('ERR_MALFORMED_JSON', `The data parameter does not decode to JSON: ${(err as Error).message}`, 'data');
  }
}
