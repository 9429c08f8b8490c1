/** Text checks shared by the validators: UTF-8 lengths, identifiers, display names, human-facing text, HTTP headers. */
import { LIMITS } from './defaults.js';

/**
 * The UTF-8 byte length of `s` (lone surrogates count as the 3-byte replacement character).
 *
 * @example
 * utf8Length('é'); // 2
 */
export function utf8Length(s: string): number {
  let bytes = 0;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * `too-short` below `min` bytes, `too-long` above `max` bytes, else `undefined`.
 *
 * @example
 * lengthProblem('', 1, 4); // 'too-short'
 */
export function lengthProblem(s: string, min: number, max: number): 'too-short' | 'too-long' | undefined {
  const length = utf8Length(s);
  return length < min ? 'too-short' : length > max ? 'too-long' : undefined;
}

/**
 * Rivet's *ident*: lowercase `a-z0-9-`, 1–16 chars, no `--`, no leading or trailing `-`.
 *
 * @example
 * isIdent('lnd-atl'); // true
 * isIdent('a--b'); // false
 */
export function isIdent(s: string): boolean {
  return s.length <= LIMITS.identBytes && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(s);
}

/**
 * Rivet's long display name shape (length is checked apart): no whitespace but single spaces, and
 * no space at either end.
 *
 * @example
 * isDisplayNameShape('My version'); // true
 * isDisplayNameShape('a  b'); // false
 */
export function isDisplayNameShape(s: string): boolean {
  return !/(?! )\p{White_Space}/u.test(s) && !s.startsWith(' ') && !s.endsWith(' ') && !s.includes('  ');
}

/** Control characters (C0, DEL, C1), bidi embeddings, overrides, isolates and marks, lone surrogates. */
const UNSAFE_TEXT = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Whether text meant for people holds nothing that hides or reorders what they see: no control
 * character (NUL included), no bidi embedding, override, isolate or mark (`Evil\u202egnp.exe`
 * shows as `Evilexe.png`), no lone surrogate (not text at all). Every script, emoji and joiner is
 * kept.
 *
 * @example
 * isHumanText('名前 👍🏽'); // true
 * isHumanText('a\u202eb'); // false
 */
export const isHumanText = (s: string): boolean => !UNSAFE_TEXT.test(s);

/**
 * An RFC 7230 header field name (a `token`).
 *
 * @example
 * isHeaderName('X-Api-Key'); // true
 */
export const isHeaderName = (s: string): boolean => /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s);

/**
 * A header value a HTTP client accepts: bytes 0x20–0xFF (not DEL) and tab; no CR, LF or NUL.
 *
 * @example
 * isHeaderValue('a\r\nb'); // false
 */
export const isHeaderValue = (s: string): boolean => /^[\t\x20-\x7e\x80-\xff]*$/.test(s);
