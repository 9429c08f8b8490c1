import { describe, expect, it } from 'vitest';
import {
  cdnHost,
  cdnPath,
  compileRoutes,
  HTML_PRIORITY,
  noneMatch,
  parseRange,
  pickEncoding,
  routeFor,
  SITE_PRIORITY,
  type CdnPath,
  type CompiledRoute,
} from '../../src/core/cdn.js';
import type { CdnRoute } from '../../src/core/config/types.js';

// The CDN's request rules at the core level (the server's CDN tests drive them through real HTTP
// requests; these pin each boundary so that a mutation of the rules cannot hide behind the I/O).

describe('cdnHost', () => {
  const D = 'cdn.example';

  it('names the prod namespace by the game alone and another by game--namespace', () => {
    expect(cdnHost('my-game.cdn.example', D)).toEqual({ kind: 'name', game: 'my-game', namespace: 'prod' });
    expect(cdnHost('my-game--staging.cdn.example', D)).toEqual({ kind: 'name', game: 'my-game', namespace: 'staging' });
    expect(cdnHost('g--a-b.cdn.example', D)).toEqual({ kind: 'name', game: 'g', namespace: 'a-b' });
  });

  it('lowercases, trims, and drops a port of 1 to 5 digits and a trailing dot', () => {
    expect(cdnHost('  My-Game--Staging.CDN.Example:8443 ', D)).toEqual({ kind: 'name', game: 'my-game', namespace: 'staging' });
    expect(cdnHost('g.cdn.example:1', D)).toEqual({ kind: 'name', game: 'g', namespace: 'prod' });
    expect(cdnHost('g.cdn.example.', D)).toEqual({ kind: 'name', game: 'g', namespace: 'prod' });
    expect(cdnHost('g.cdn.example:65535', 'CDN.EXAMPLE')).toEqual({ kind: 'name', game: 'g', namespace: 'prod' });
    // Six digits are no port: the colon stays and the host is malformed.
    expect(cdnHost('g.cdn.example:123456', D)).toBeUndefined();
    // Only a trailing port is a port.
    expect(cdnHost('g:80.cdn.example', D)).toBeUndefined();
  });

  it('reads any other well-formed host as a custom domain, lowercased', () => {
    expect(cdnHost('Play.Example.com', D)).toEqual({ kind: 'domain', domain: 'play.example.com' });
    expect(cdnHost('play.example.com:80', D)).toEqual({ kind: 'domain', domain: 'play.example.com' });
    expect(cdnHost('play.example.com.', D)).toEqual({ kind: 'domain', domain: 'play.example.com' });
    // The CDN domain itself has no game label: it is a (custom) domain name.
    expect(cdnHost('cdn.example', D)).toEqual({ kind: 'domain', domain: 'cdn.example' });
    // A host that only ends with the CDN domain's text, not at a label boundary.
    expect(cdnHost('xcdn.example', D)).toEqual({ kind: 'domain', domain: 'xcdn.example' });
    // Without a CDN domain configured every host is a custom domain.
    expect(cdnHost('g.cdn.example', undefined)).toEqual({ kind: 'domain', domain: 'g.cdn.example' });
  });

  it('refuses no host, an empty host and characters no DNS name has', () => {
    expect(cdnHost(undefined, D)).toBeUndefined();
    expect(cdnHost('', D)).toBeUndefined();
    expect(cdnHost('   ', D)).toBeUndefined();
    expect(cdnHost(':80', D)).toBeUndefined();
    expect(cdnHost('.', D)).toBeUndefined();
    expect(cdnHost('a_b.example.com', D)).toBeUndefined();
    expect(cdnHost('a b.example.com', D)).toBeUndefined();
    expect(cdnHost('[::1]:80', D)).toBeUndefined();
    expect(cdnHost('user@host.example', D)).toBeUndefined();
  });

  it('refuses a game or namespace label that is not a name id', () => {
    for (const label of ['-g', 'g-', '--ns', 'g--', 'g--ns-', 'g---', 'a.b']) {
      expect(cdnHost(`${label}.cdn.example`, D), label).toBeUndefined();
    }
    expect(cdnHost('a.cdn.example', D)).toEqual({ kind: 'name', game: 'a', namespace: 'prod' });
    expect(cdnHost('0--9.cdn.example', D)).toEqual({ kind: 'name', game: '0', namespace: '9' });
    // The first `--` splits: the rest is the namespace.
    expect(cdnHost('g--ns--x.cdn.example', D)).toEqual({ kind: 'name', game: 'g', namespace: 'ns--x' });
  });
});

describe('cdnPath', () => {
  it('decodes the path, drops the query and fragment, and names the site file', () => {
    expect(cdnPath('/assets/app%20v2.js?x=1')).toEqual({ path: '/assets/app v2.js', file: 'assets/app v2.js', html: false });
    expect(cdnPath('/a.js#top')).toEqual({ path: '/a.js', file: 'a.js', html: false });
    expect(cdnPath('/a.js?q=/../x#f')).toEqual({ path: '/a.js', file: 'a.js', html: false });
    expect(cdnPath('/%C3%A9t%C3%A9.png')).toEqual({ path: '/été.png', file: 'été.png', html: false });
  });

  it('serves index.html for / and for any path ending in /, as HTML', () => {
    expect(cdnPath('/')).toEqual({ path: '/', file: 'index.html', html: true });
    expect(cdnPath('/?a=b')).toEqual({ path: '/', file: 'index.html', html: true });
    expect(cdnPath('/docs/')).toEqual({ path: '/docs/', file: 'docs/index.html', html: true });
    expect(cdnPath('/docs/page.html')).toEqual({ path: '/docs/page.html', file: 'docs/page.html', html: true });
    expect(cdnPath('/docs/page.htm')?.html).toBe(false);
    expect(cdnPath('/docs/html')?.html).toBe(false);
    expect(cdnPath('/docs/page.html.gz')?.html).toBe(false);
  });

  it('refuses targets that are not an absolute path or do not decode', () => {
    for (const t of ['', '*', 'a.js', 'http://x/a.js', '?/a', '/%', '/%zz', '/%E0%A4%A']) expect(cdnPath(t), t).toBeUndefined();
  });

  it('refuses backslashes, control characters and empty, . or .. segments, encoded or not', () => {
    const refused = [
      '/a\\b',
      '/a%5cb',
      '/a%5Cb',
      '/a%00b',
      '/a%01',
      '/a%1f',
      '/a%1F',
      '/a%7f',
      '/a\tb',
      '//a',
      '/a//b',
      '/./a',
      '/a/.',
      '/a/..',
      '/a/../b',
      '/%2e%2e/etc/passwd',
      '/%2E%2E/x',
      '/a/%2e/b',
      '/a%2f%2e%2e%2fb',
      '/..',
      '/.',
    ];
    for (const t of refused) expect(cdnPath(t), t).toBeUndefined();
  });

  it('never decodes %2f or %5c into a separator: a path with an encoded slash or backslash names no file', () => {
    for (const t of ['/sub%2fb.txt', '/sub%2Fb.txt', '/sub%5cb.txt', '/sub%5Cb.txt', '/a/%2f', '/%2fsub/b.txt', '/sub%2f']) expect(cdnPath(t), t).toBeUndefined();
    // The same path sent with its separator is served; a double-encoded one is a literal name.
    expect(cdnPath('/sub/b.txt')?.file).toBe('sub/b.txt');
    expect(cdnPath('/sub%252fb.txt')?.file).toBe('sub%2fb.txt');
  });

  it('keeps the characters next to the refused ones', () => {
    // Space (0x20) and ~ (0x7e) border the control range; ... and .a are names, not traversal.
    expect(cdnPath('/a%20b')?.file).toBe('a b');
    expect(cdnPath('/a~b')?.file).toBe('a~b');
    expect(cdnPath('/.../x')?.file).toBe('.../x');
    expect(cdnPath('/.well-known/x')?.file).toBe('.well-known/x');
    expect(cdnPath('/a..b')?.file).toBe('a..b');
    // A double-encoded traversal decodes once, to a literal name that no site path has.
    expect(cdnPath('/%252e%252e/x')?.file).toBe('%2e%2e/x');
  });
});

const route = (glob: string, priority: number, headers: readonly [string, string][] = []): CdnRoute =>
  ({
    glob,
    priority,
    middlewares: [{ kind: { customHeaders: { headers: headers.map(([name, value]) => ({ name, value })) } } }],
  });

const pathOf = (target: string): CdnPath => {
  const p = cdnPath(target);
  if (p === undefined) throw new Error(`no path for ${target}`);
  return p;
};

describe('compileRoutes and routeFor', () => {
  it('ranks custom routes above the site router, with every custom header of every middleware', () => {
    const compiled = compileRoutes([
      {
        glob: '**/*.wasm',
        priority: 7,
        middlewares: [
          { kind: { customHeaders: { headers: [{ name: 'x-a', value: '1' }] } } },
          { kind: {} },
          { kind: { customHeaders: { headers: [{ name: 'x-b', value: '2' }, { name: 'x-c', value: '3' }] } } },
        ],
      },
    ]);
    expect(compiled).toHaveLength(1);
    expect(compiled[0]?.priority).toBe(SITE_PRIORITY + 1 + 7);
    expect(compiled[0]?.headers).toEqual([
      ['x-a', '1'],
      ['x-b', '2'],
      ['x-c', '3'],
    ]);
    expect(compiled[0]?.match.test('/game/main.wasm')).toBe(true);
    expect(compiled[0]?.match.test('/game/main.js')).toBe(false);
  });

  it('drops a route whose glob is invalid and keeps the others in order', () => {
    const compiled = compileRoutes([route('a/**b', 0, [['x', 'bad']]), route('a/*', 1, [['x', 'one']]), route('', 2), route('b', 3, [['x', 'three']])]);
    expect(compiled.map((r) => r.headers)).toEqual([[['x', 'one']], [['x', 'three']]]);
    expect(compiled.map((r) => r.priority)).toEqual([102, 104]);
  });

  it('applies the matching route of highest priority, the first listed on a tie', () => {
    const compiled = compileRoutes([route('**', 0, [['x', 'low']]), route('a/*', 5, [['x', 'first']]), route('a/*', 5, [['x', 'second']]), route('b/*', 9, [['x', 'other']])]);
    expect(routeFor(compiled, pathOf('/a/f.js'))).toEqual({ headers: [['x', 'first']], html: false });
    expect(routeFor(compiled, pathOf('/c/f.js'))).toEqual({ headers: [['x', 'low']], html: false });
    expect(routeFor(compiled, pathOf('/b/f.js'))).toEqual({ headers: [['x', 'other']], html: false });
    // A later route of higher priority wins over an earlier one.
    const reversed = compileRoutes([route('a/*', 1, [['x', 'early']]), route('a/*', 2, [['x', 'late']])]);
    expect(routeFor(reversed, pathOf('/a/f.js')).headers).toEqual([['x', 'late']]);
  });

  it('serves a path no route matches with no headers', () => {
    const compiled = compileRoutes([route('a/*', 0, [['x', '1']])]);
    expect(routeFor(compiled, pathOf('/b/f.js'))).toEqual({ headers: [], html: false });
    expect(routeFor([], pathOf('/index.html'))).toEqual({ headers: [], html: true });
  });

  it('lets a custom route take an HTML path only above the HTML router (priority > 150)', () => {
    const at = (priority: number): CompiledRoute[] => [{ match: /^\/.*$/, priority, headers: [['x', String(priority)]] }];
    expect(HTML_PRIORITY).toBe(150);
    expect(routeFor(at(150), pathOf('/'))).toEqual({ headers: [], html: true });
    expect(routeFor(at(151), pathOf('/'))).toEqual({ headers: [['x', '151']], html: false });
    expect(routeFor(at(100), pathOf('/a.js'))).toEqual({ headers: [], html: false });
    expect(routeFor(at(101), pathOf('/a.js'))).toEqual({ headers: [['x', '101']], html: false });
    // Through compileRoutes: priority 49 is 150 (not above), 50 is 151.
    expect(routeFor(compileRoutes([route('**', 49, [['x', 'y']])]), pathOf('/docs/')).html).toBe(true);
    expect(routeFor(compileRoutes([route('**', 50, [['x', 'y']])]), pathOf('/docs/'))).toEqual({ headers: [['x', 'y']], html: false });
  });
});

describe('parseRange', () => {
  it('reads a start-end range, inclusive, clamped to the size', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'part', start: 0, end: 9 });
    expect(parseRange('  bytes=10-19 ', 100)).toEqual({ kind: 'part', start: 10, end: 19 });
    expect(parseRange('bytes=0-0', 100)).toEqual({ kind: 'part', start: 0, end: 0 });
    expect(parseRange('bytes=5-5', 100)).toEqual({ kind: 'part', start: 5, end: 5 });
    expect(parseRange('bytes=90-99', 100)).toEqual({ kind: 'part', start: 90, end: 99 });
    expect(parseRange('bytes=90-100', 100)).toEqual({ kind: 'part', start: 90, end: 99 });
    expect(parseRange('bytes=5-5000', 100)).toEqual({ kind: 'part', start: 5, end: 99 });
  });

  it('reads an open range to the end', () => {
    expect(parseRange('bytes=5-', 100)).toEqual({ kind: 'part', start: 5, end: 99 });
    expect(parseRange('bytes=99-', 100)).toEqual({ kind: 'part', start: 99, end: 99 });
    expect(parseRange('bytes=0-', 1)).toEqual({ kind: 'part', start: 0, end: 0 });
  });

  it('reads a suffix range, the whole file when it asks for more', () => {
    expect(parseRange('bytes=-10', 100)).toEqual({ kind: 'part', start: 90, end: 99 });
    expect(parseRange('bytes=-1', 100)).toEqual({ kind: 'part', start: 99, end: 99 });
    expect(parseRange('bytes=-100', 100)).toEqual({ kind: 'part', start: 0, end: 99 });
    expect(parseRange('bytes=-101', 100)).toEqual({ kind: 'part', start: 0, end: 99 });
  });

  it('finds a range that starts at or past the end, a zero suffix, or any range of an empty file unsatisfiable', () => {
    expect(parseRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=100-200', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('ignores headers that are no single byte range, and backwards ranges', () => {
    for (const h of [undefined, '', 'bytes=', 'bytes=-', 'bytes=0-1,2-3', 'items=0-1', 'bytes=a-b', 'bytes 0-1', 'bytes=0-1x', 'xbytes=0-1', 'bytes=9-5', 'bytes=12345678901234567-']) {
      expect(parseRange(h, 100), String(h)).toEqual({ kind: 'all' });
    }
    expect(parseRange('bytes=1234567890123456-', 100)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('noneMatch', () => {
  const etag = '"abc"';

  it('matches the tag, any tag of a list, weak or strong, and *', () => {
    expect(noneMatch('"abc"', etag)).toBe(true);
    expect(noneMatch('W/"abc"', etag)).toBe(true);
    expect(noneMatch('"x", W/"abc"', etag)).toBe(true);
    expect(noneMatch('"x",  "abc"  ', etag)).toBe(true);
    expect(noneMatch('*', etag)).toBe(true);
    expect(noneMatch('  *  ', etag)).toBe(true);
  });

  it('matches nothing else', () => {
    expect(noneMatch(undefined, etag)).toBe(false);
    expect(noneMatch('', etag)).toBe(false);
    expect(noneMatch('"abd"', etag)).toBe(false);
    expect(noneMatch('abc', etag)).toBe(false);
    expect(noneMatch('"x", "y"', etag)).toBe(false);
    expect(noneMatch('w/"abc"', etag)).toBe(false);
    expect(noneMatch('"*"', etag)).toBe(false);
    expect(noneMatch('X/"abc"', etag)).toBe(false);
  });
});

describe('pickEncoding', () => {
  it('prefers brotli, then gzip, among the codings the client accepts', () => {
    expect(pickEncoding('gzip, deflate, br')).toBe('br');
    expect(pickEncoding('br')).toBe('br');
    expect(pickEncoding('gzip')).toBe('gzip');
    expect(pickEncoding('GZIP, Deflate')).toBe('gzip');
    expect(pickEncoding(' BR ;q=1')).toBe('br');
    expect(pickEncoding('gzip;q=1, br;q=1')).toBe('br');
  });

  it('follows q-values: 0 refuses a coding, a higher one wins', () => {
    expect(pickEncoding('br;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('br; q=0, gzip')).toBe('gzip');
    expect(pickEncoding('gzip;q=0.5, br;q=0.4')).toBe('gzip');
    expect(pickEncoding('br;level=9;q=0.5, gzip;q=0.6')).toBe('gzip');
    expect(pickEncoding('gzip;q=0.001')).toBe('gzip');
    expect(pickEncoding('br;q=abc, gzip;q=0.1')).toBe('gzip');
    expect(pickEncoding('br;q=0, gzip;q=0')).toBeUndefined();
  });

  it('reads * for the codings not named', () => {
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding('br;q=0, *')).toBe('gzip');
    expect(pickEncoding('*;q=0.5, gzip')).toBe('gzip');
    expect(pickEncoding('*;q=0')).toBeUndefined();
    expect(pickEncoding('*;q=0, gzip')).toBe('gzip');
  });

  it('chooses identity when nothing it makes is accepted', () => {
    expect(pickEncoding(undefined)).toBeUndefined();
    expect(pickEncoding('')).toBeUndefined();
    expect(pickEncoding('identity')).toBeUndefined();
    expect(pickEncoding('deflate, compress')).toBeUndefined();
    expect(pickEncoding('gzipx, xbr')).toBeUndefined();
  });
});
