/** The CDN route glob syntax of wire.md §6.3, checked through the paths each glob really matches. */
import { describe, expect, it } from 'vitest';
import { globKey, globRegExp } from '../../../src/core/config/validate-glob.js';

/** Which of `paths` the glob matches (request paths include their leading `/`). */
const matching = (glob: string, paths: readonly string[]): string[] => {
  const re = globRegExp(glob);
  if (re === undefined) throw new Error(`invalid glob ${glob}`);
  return paths.filter((p) => re.test(p));
};

describe('globRegExp (wire.md §6.3)', () => {
  it('matches literal segments separated by `/`, with regex characters taken literally', () => {
    expect(matching('a/b', ['/a/b', '/ab', '/a/b/c', '/x/a/b'])).toEqual(['/a/b']);
    expect(matching('app.js', ['/app.js', '/appxjs'])).toEqual(['/app.js']);
    expect(matching('(a)+[b]{1}|$^?.html', ['/(a)+[b]{1}|$^?.html', '/aa1.html'])).toEqual(['/(a)+[b]{1}|$^?.html']);
  });

  it('`*` matches one or more characters within a single segment', () => {
    expect(matching('assets/*.js', ['/assets/app.js', '/assets/.js', '/assets/a/b.js', '/assets/app.css', '/assets/*.js'])).toEqual(['/assets/app.js', '/assets/*.js']);
    expect(matching('*', ['/index', '/', '/a/b'])).toEqual(['/index']);
  });

  it('a `**` segment matches any depth, first, in the middle or last', () => {
    expect(matching('**/*.wasm', ['/a/b/c.wasm', '/c.wasm', '/a/c.js'])).toEqual(['/a/b/c.wasm', '/c.wasm']);
    expect(matching('assets/**', ['/assets/x/y.png', '/assets/', '/other/x.png'])).toEqual(['/assets/x/y.png', '/assets/']);
    expect(matching('a/**/z', ['/a/z', '/a/b/c/z', '/b/z'])).toEqual(['/a/z', '/a/b/c/z']);
  });

  it('collapses consecutive `**` segments into one', () => {
    const paths = ['/x', '/a/x', '/a/b/x', '/y'];
    expect(matching('**/**/x', paths)).toEqual(matching('**/x', paths));
    expect(matching('**/**/x', paths)).toEqual(['/x', '/a/x', '/a/b/x']);
    expect(globKey('a/**/**/**')).toBe(globKey('a/**'));
  });

  it('a backslash keeps the next `/` inside its segment (and matches nothing itself)', () => {
    expect(matching('a\\/b', ['/a/b', '/a\\/b', '/a\\b'])).toEqual(['/a/b']);
    expect(matching('\\a/**', ['/a/x/y', '/a/'])).toEqual(['/a/x/y', '/a/']);
    expect(matching('x\\y/b/**', ['/xy/b/c'])).toEqual(['/xy/b/c']);
    // `\/**` is one segment mixing `**` with other characters: invalid.
    expect(globRegExp('a\\/**')).toBeUndefined();
    expect(globRegExp('\\/**')).toBeUndefined();
    expect(globKey('a\\/**')).toBeUndefined();
    // After an escaped character the next `/` splits again.
    expect(globKey('\\a/**')).toBeDefined();
  });

  it('treats a leading `/` as an empty first segment', () => {
    expect(matching('/**', ['//a/b', '/a'])).toEqual(['//a/b']);
  });

  it('matches whole characters: a lone surrogate in a glob never matches half of one', () => {
    expect(matching('\ud83d*', ['/\ud83d\ude00', '/\ud83dx'])).toEqual(['/\ud83dx']);
    expect(matching('*', ['/\ud83d\ude00'])).toEqual(['/\ud83d\ude00']);
  });

  it('is undefined for an empty or invalid glob', () => {
    for (const glob of ['', 'a**', '**a', 'a/***', 'x/**b/y']) expect(globRegExp(glob)).toBeUndefined();
  });
});
