import { ApiError } from '../core/errors';
import { parseExactJson } from '../core/records/exact-json';
import { flatParams, type ParsedBody } from './payload';

/** JSON text starts with `{` or `[` (after white space); no form field name plausibly does. */
const LOOKS_LIKE_JSON = /^\s*[[{]/;
/** `name=value`, optionally `&name=value…`: what a form looks like. */
const LOOKS_LIKE_FORM = /^[^\s{}[\]"'=&]+=[^\s]*$/;

const isContainer = (v: unknown): boolean => typeof v === 'object' && v !== null;

/** Parsed keeping every integer's digits (exact-json.ts), as every body is. */
function tryJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: parseExactJson(text) };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/**
 * A form body that is really JSON: `curl -d '{…}'` without `-H 'Content-Type: application/json'`
 * sends `application/x-www-form-urlencoded`, and a form parser would make the whole JSON one
 * field name. The body is read as JSON when its text is a JSON object or array, or when it is
 * exactly one field, without a value, whose decoded name is one (JSON sent URL-encoded).
 * JSON-looking text that does not parse is refused with the reason, never stored as a field.
 */
function formBody(text: string): ParsedBody {
  if (LOOKS_LIKE_JSON.test(text)) {
    const parsed = tryJson(text);
    if (parsed.ok && isContainer(parsed.value)) return { kind: 'json', value: parsed.value };
    throw new ApiError('ERR_MALFORMED_JSON', `The body was sent as a form (Content-Type: application/x-www-form-urlencoded, what curl -d sends by default) and looks like JSON, but it is not valid JSON${parsed.ok ? '' : `: ${parsed.reason}`}. Send valid JSON with Content-Type: application/json.`);
  }
  const form = flatParams(new URLSearchParams(text));
  const names = Object.keys(form);
  if (names.length === 1 && form[names[0]!] === '' && LOOKS_LIKE_JSON.test(names[0]!)) {
    const parsed = tryJson(names[0]!);
    if (parsed.ok && isContainer(parsed.value)) return { kind: 'json', value: parsed.value };
    throw new ApiError('ERR_MALFORMED_JSON', `The body was sent as a form (Content-Type: application/x-www-form-urlencoded) and is one URL-encoded field that looks like JSON, but it is not valid JSON${parsed.ok ? '' : `: ${parsed.reason}`}. Send valid JSON with Content-Type: application/json.`);
  }
  return { kind: 'form', value: form };
}

/** Why a JSON-typed body did not parse, and what to send instead when its shape says what it is. */
function jsonError(text: string, reason: string, contentType: string | undefined): ApiError {
  const readAs = contentType ? `Content-Type ${contentType}` : 'no Content-Type, so it was read as JSON';
  if (LOOKS_LIKE_FORM.test(text.trim())) {
    return new ApiError('ERR_MALFORMED_JSON', `The body came with ${readAs}, but it is form fields (name=value&…), not JSON. Send Content-Type: application/x-www-form-urlencoded, or a JSON object with Content-Type: application/json.`);
  }
  return new ApiError('ERR_MALFORMED_JSON', `The body is not valid JSON (${readAs}): ${reason}`);
}

/**
 * The v3 endpoints' reading of a body's text. Forms that are really JSON are read as JSON (see
 * formBody); bodies whose shape contradicts their Content-Type are refused with a message that
 * says what arrived and what to send. Webhook sources keep `parseBodyText`: their senders' forms
 * are forms (Slack's `payload=` JSON included).
 */
export function parseV3BodyText(text: string, isForm: boolean, contentType: string | undefined): ParsedBody {
  if (isForm) return text.length === 0 ? { kind: 'none' } : formBody(text);
  if (text.trim().length === 0) return { kind: 'none' };
  const parsed = tryJson(text);
  if (!parsed.ok) throw jsonError(text, parsed.reason, contentType);
  return { kind: 'json', value: parsed.value };
}
