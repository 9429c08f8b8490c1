/**
 * Which paths an upload's files may have: relative, well-formed, within the length bounds, and no
 * segment that any later decoding could turn into a traversal; and within one upload, no duplicate
 * and no file where another needs a directory.
 */
import type { UploadLimits } from './upload-types.js';

const DRIVE = /^[a-z]:/i;
const ESCAPE_RUN = /(?:%[0-9a-f]{2})+/gi;

/** Whether `s` has a C0 or C1 control character (NUL included) or DEL. */
const hasControl = (s: string): boolean => {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
};

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * What is wrong with one path segment, looking through percent escapes and compatibility forms
 * (`%2e%2e`, fullwidth `．．`), so that no later decoding can turn it into a traversal.
 */
const segmentProblem = (segment: string): string | undefined => {
  if (segment === '') return 'has an empty segment';
  let decoded: string;
  try {
    decoded = segment.replace(ESCAPE_RUN, (run) => decodeURIComponent(run));
  } catch {
    return 'has a malformed percent escape';
  }
  for (const form of [segment, decoded, segment.normalize('NFKC'), decoded.normalize('NFKC')]) {
    if (form === '.' || form === '..') return 'has a `.` or `..` segment';
    if (form.includes('\\')) return 'has a backslash';
    if (form.includes('/')) return 'has an encoded `/`';
    if (hasControl(form)) return 'has a control character';
  }
  return undefined;
};

/** What is wrong with an upload path on its own, if anything. */
export const pathProblem = (path: string, limits: UploadLimits): string | undefined => {
  if (path === '') return 'is empty';
  if (path.startsWith('/')) return 'is absolute';
  if (DRIVE.test(path)) return 'starts with a drive letter';
  try {
    encodeURIComponent(path);
  } catch {
    return 'is not well-formed Unicode';
  }
  if (utf8Bytes(path) > limits.maxPathBytes) return `is longer than ${limits.maxPathBytes} bytes`;
  for (const segment of path.split('/')) {
    if (utf8Bytes(segment) > limits.maxSegmentBytes) return `has a segment longer than ${limits.maxSegmentBytes} bytes`;
    const problem = segmentProblem(segment);
    if (problem !== undefined) return problem;
  }
  return undefined;
};

/**
 * The paths of one upload so far, by normalised form (NFC; lowercased for CDN sites, which may be
 * served from a case-insensitive filesystem): `clash` says why a new path collides with an earlier
 * one (a duplicate, or a file where another needs a directory), or records it.
 */
export const pathSet = (foldCase: boolean): { clash(path: string): string | undefined } => {
  const files = new Map<string, string>();
  const dirs = new Map<string, string>();
  return {
    clash(path) {
      const key = foldCase ? path.normalize('NFC').toLowerCase() : path.normalize('NFC');
      const segments = key.split('/');
      const prefixes = segments.slice(1).map((_, i) => segments.slice(0, i + 1).join('/'));
      const duplicate = files.get(key);
      if (duplicate !== undefined) return `duplicates '${duplicate}'`;
      const below = dirs.get(key);
      if (below !== undefined) return `is a directory of '${below}'`;
      for (const prefix of prefixes) {
        const file = files.get(prefix);
        if (file !== undefined) return `is inside '${file}', which is a file`;
      }
      files.set(key, path);
      for (const prefix of prefixes) if (!dirs.has(prefix)) dirs.set(prefix, path);
      return undefined;
    },
  };
};
