/**
 * The dotted paths of `--set` and `--sweep`: `a.b.c`, with array items as `[i]` or as a numeric
 * segment (`regions[0].id`, `regions.0.id`), and override values (JSON when they parse, else the
 * raw string).
 */
import { isForbiddenKey } from '../../core/config/path.js';

/** One path step; `index` marks the bracket form, which creates an array when absent. */
export interface PathSegment {
  readonly key: string;
  readonly index: boolean;
}

const PART = /^([^[\]]*)((?:\[\d+\])*)$/;

/** Why a path does not parse. */
export type PathProblem = 'invalid' | 'invalid-key';

/**
 * Splits a dotted path into segments, or names its problem: `invalid` (empty, empty segment,
 * unbalanced or non-numeric brackets), `invalid-key` (`__proto__`, `constructor`, `prototype`).
 *
 * @example
 * parseOverridePath('regions[0].id'); // [{ key: 'regions', index: false }, { key: '0', index: true }, { key: 'id', index: false }]
 * parseOverridePath('a..b'); // 'invalid'
 */
export function parseOverridePath(path: string): readonly PathSegment[] | PathProblem {
  const segments: PathSegment[] = [];
  for (const part of path.split('.')) {
    const match = PART.exec(part);
    const head = match?.[1];
    const brackets = match?.[2];
    if (head === undefined || brackets === undefined || (head === '' && brackets === '')) return 'invalid';
    if (head !== '') segments.push({ key: head, index: false });
    for (const digits of brackets.matchAll(/\[(\d+)\]/g)) segments.push({ key: digits[1] ?? '', index: true });
  }
  return segments.some((s) => isForbiddenKey(s.key)) ? 'invalid-key' : segments;
}

/**
 * An override value: JSON when the text parses as JSON, else the text itself.
 *
 * @example
 * overrideValue('3'); // 3
 * overrideValue('eu'); // 'eu'
 */
export function overrideValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Splits a sweep's value list at the commas outside brackets, braces and JSON strings.
 *
 * @example
 * splitValues('1,[2,3],"a,b"'); // ['1', '[2,3]', '"a,b"']
 */
export function splitValues(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted && c === '\\') i += 1;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '[' || c === '{')) depth += 1;
    else if (!quoted && (c === ']' || c === '}')) depth -= 1;
    else if (!quoted && depth === 0 && c === ',') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
