import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkVerificationUrl } from '../../../src/core/config/validate-url.js';
import { globKey } from '../../../src/core/config/validate-glob.js';
import { ipv6Value, parseIpv4, parseIpv6 } from '../../../src/core/net/ip-literal.js';
import { classifyIp } from '../../../src/core/net/special-addresses.js';

const globalV4 = (ip: number): boolean => classifyIp({ family: 4, value: BigInt(ip) }) === 'global';
const globalV6 = (pieces: readonly number[]): boolean => classifyIp({ family: 6, value: ipv6Value(pieces) }) === 'global';

describe('checkVerificationUrl', () => {
  it.each([
    'https://game.example.com/verify',
    'HTTP://Game.Example.COM:80/x?y#z',
    'https://8.8.8.8/',
    'https://[2606:4700::1111]:443/',
    'https://example.com.',
    'https://under_score.example/',
  ])('accepts %s', (url) => {
    expect(checkVerificationUrl(url)).toBeUndefined();
  });

  it.each([
    // IPv4 in every form a WHATWG parser reads as an address.
    ['http://127.1/', 'invalid-ip'],
    ['http://0x7f.0.0.1/', 'invalid-ip'],
    ['http://2130706433/', 'invalid-ip'],
    ['http://0177.0.0.1/', 'invalid-ip'],
    ['http://169.254.169.254/latest', 'invalid-ip'],
    ['http://172.16.0.1/', 'invalid-ip'],
    ['http://100.64.0.1/', 'invalid-ip'],
    ['http://0.0.0.0/', 'invalid-ip'],
    ['http://255.255.255.255/', 'invalid-ip'],
    ['http://224.0.0.1/', 'invalid-ip'],
    ['http://[::]/', 'invalid-ip'],
    ['http://[::ffff:127.0.0.1]/', 'invalid-ip'],
    ['http://[fe80::1]/', 'invalid-ip'],
    ['http://[fd00::1]/', 'invalid-ip'],
    ['http://[64:ff9b::a00:1]/', 'invalid-ip'],
    ['http://256.0.0.1/', 'invalid'],
    ['http://1.2.3.4.5/', 'invalid'],
    ['http://example.0x/', 'invalid'],
    ['http://[1::2::3]/', 'invalid'],
    ['http://[::1%25eth0]/', 'invalid'],
    // Names that are internal, or that a client could read differently.
    ['http://LOCALHOST/', 'invalid'],
    ['http://a.localhost/', 'invalid'],
    ['http://metadata.google.internal/', 'invalid'],
    ['http://vault.service.consul/', 'invalid'],
    ['http://127%2e0.0.1/', 'invalid'],
    ['http://１２７．０．０．１/', 'invalid'],
    ['http://a..b/', 'invalid'],
    ['http://1\n27.0.0.1/', 'invalid'],
    [' http://example.com', 'invalid'],
    ['', 'invalid'],
    ['http://example.com:99999/', 'invalid'],
    ['http://example.com:8a/', 'invalid'],
    ['http://a@evil.example/', 'invalid'],
    ['http://127.0.0.1\\@evil.example/', 'invalid-ip'],
    ['http:///127.0.0.1/', 'no-host'],
    ['http:/example.com', 'no-host'],
    ['javascript:alert(1)', 'invalid-scheme'],
    ['file:///etc/passwd', 'invalid-scheme'],
  ])('%j → %s', (url, expected) => {
    expect(checkVerificationUrl(url)).toBe(expected);
  });
});

describe('ip parsing', () => {
  it('parses WHATWG IPv4 forms', () => {
    expect(parseIpv4('127.0.0.1')).toBe(0x7f000001);
    expect(parseIpv4('127.1')).toBe(0x7f000001);
    expect(parseIpv4('0x7f000001')).toBe(0x7f000001);
    expect(parseIpv4('1.2.3.4.')).toBe(0x01020304);
    expect(parseIpv4('1.2.65536')).toBeUndefined();
    expect(parseIpv4('4294967296')).toBeUndefined();
  });

  it('parses IPv6 with compression and an embedded IPv4', () => {
    expect(parseIpv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIpv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIpv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIpv6('1:2:3:4:5:6:7')).toBeUndefined();
    expect(parseIpv6('1:2:3:4::5:6:7:8')).toBeUndefined();
    expect(parseIpv6('::01.2.3.4')).toBeUndefined();
    expect(globalV6(parseIpv6('2001:4860::8888') ?? [])).toBe(true);
    expect(globalV6(parseIpv6('2001:db8::1') ?? [])).toBe(false);
  });
});

describe('globKey (wire.md §6.3)', () => {
  it('accepts Rivet glob syntax and canonicalizes repeated double stars', () => {
    expect(globKey('**/*.html')).toBeDefined();
    expect(globKey('*.*.*.*a*')).toBeDefined();
    expect(globKey('/')).toBeDefined();
    expect(globKey('a\\/**b')).toBeUndefined();
    expect(globKey('**/**/x')).toBe(globKey('**/x'));
    expect(globKey('a/b')).not.toBe(globKey('a\\/b'));
  });

  it.each(['', '***', '**a', 'a**', 'x/**b/y'])('refuses %j', (glob) => {
    expect(globKey(glob)).toBeUndefined();
  });
});

describe('checkVerificationUrl agrees with the WHATWG parser', () => {
  const piece = fc.constantFrom('127', '0', '1', '10', '0x7f', '0177', '256', 'a', 'example', 'com', 'local', 'localhost', '%2e', '', 'xn--bcher-kva', '8', '8.8');
  const host = fc.oneof(
    fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('.')),
    fc.constantFrom('[::1]', '[2606:4700::1111]', '[::ffff:8.8.8.8]', '[fe80::1]', '[zz]'),
  );
  const url = fc.tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'http:\\\\', 'ftp://'), fc.constantFrom('', 'u@', 'u:p@'), host,
    fc.constantFrom('', ':80', ':', ':65536'), fc.constantFrom('', '/', '/p?q#f', '\\x')).map((parts) => parts.join(''));

  it('accepts only URLs whose parsed host is a public name or global address', () => {
    fc.assert(fc.property(url, (u) => {
      if (checkVerificationUrl(u) !== undefined) return;
      const parsed = new URL(u);
      expect(['http:', 'https:']).toContain(parsed.protocol);
      expect(parsed.username + parsed.password).toBe('');
      const hostname = parsed.hostname;
      expect(hostname).not.toBe('');
      if (hostname.startsWith('[')) expect(globalV6(parseIpv6(hostname.slice(1, -1)) ?? [0])).toBe(true);
      else if (/^[0-9.]+$/.test(hostname)) expect(globalV4(parseIpv4(hostname) ?? 0)).toBe(true);
      else expect(hostname === 'localhost' || hostname.endsWith('.local')).toBe(false);
    }));
  });
});

describe('checkVerificationUrl with an operator allowlist', () => {
  it.each([
    ['http://127.0.0.1:9000/verify', ['127.0.0.0/8'], undefined],
    ['http://127.0.0.1:9000/verify', ['127.0.0.1'], undefined],
    ['http://127.0.0.2/', ['127.0.0.1'], 'invalid-ip'],
    ['http://10.1.2.3/', ['10.0.0.0/8'], undefined],
    ['http://11.1.2.3/', ['10.0.0.0/8'], undefined],
    ['http://192.168.1.1/', ['10.0.0.0/8'], 'invalid-ip'],
    ['http://localhost:8080/', ['localhost'], undefined],
    ['http://localhost:8080/', [], 'invalid'],
    ['http://verify.internal/', ['verify.internal'], undefined],
    ['http://other.internal/', ['verify.internal'], 'invalid'],
    ['http://[::1]:9000/', ['::1'], undefined],
    ['http://[::1]:9000/', ['::/127'], undefined],
    ['http://[fd00::1]/', ['fd00::/8'], undefined],
    ['http://[fe80::1]/', ['fd00::/8'], 'invalid-ip'],
    ['http://user@127.0.0.1/', ['127.0.0.1'], 'invalid'],
  ] as const)('%s with %j → %s', (url, allowed, expected) => {
    expect(checkVerificationUrl(url, allowed)).toBe(expected);
  });
});

describe('checkVerificationUrl: the authority, piece by piece', () => {
  it.each([
    // bracketed IPv6: exactly one literal, then nothing or a port
    ['http://[2606:4700::1111]/', undefined],
    ['http://[2606:4700::1111]:443/', undefined],
    ['http://[2606:4700::1111]:/', undefined],
    ['http://[2606:4700::1111]x/', 'invalid'],
    ['http://[2606:4700::1111]]:80/', 'invalid'],
    ['http://[2606:4700::1111/', 'invalid'],
    ['http://[2606:4700::1111]:65536/', 'invalid'],
    // ports: digits only, at most 65535
    ['http://example.com:65535/', undefined],
    ['http://example.com:65536/', 'invalid'],
    ['http://example.com:a8/', 'invalid'],
    ['http://example.com:8a/', 'invalid'],
    ['http://example.com:/', undefined],
    // names: the whole host in [a-z0-9._-], no empty label, a trailing dot allowed once
    ['http://ex%41mple.com/', 'invalid'],
    ['http://%41example.com/', 'invalid'],
    ['http://example.com%41/', 'invalid'],
    ['http://./', 'invalid'],
    ['http://.example.com/', 'invalid'],
    ['http://example.com../', 'invalid'],
    ['http://localhost./', 'invalid'],
    ['http://printer.local./', 'invalid'],
    ['http://printer.local.example.com/', undefined],
    ['http://internal.example.com/', undefined],
    // the authority ends at the first / \ ? or #, or at the end of the URL
    ['http://example.local', 'invalid'],
    ['http://example.com', undefined],
    ['http://example.com?x', undefined],
    ['http://example.local#x', 'invalid'],
    // the scheme is the URL's first characters
    ['1http://example.com/', 'invalid-scheme'],
    ['x-http://example.com/', 'invalid-scheme'],
  ] as const)('%j → %s', (url, expected) => {
    expect(checkVerificationUrl(url)).toBe(expected);
  });

  it.each([
    // names: exact (a trailing dot on either side is the same name), never a name with bad characters
    ['http://localhost./', ['localhost'], undefined],
    ['http://ex%41mple.com/', ['ex%41mple.com'], 'invalid'],
    ['http://a..b.internal/', ['a..b.internal'], 'invalid'],
    ['http://verify.internal/', ['VERIFY.internal'], undefined],
    ['http://verify.internal/', ['verify.internal/32'], 'invalid'],
    // IPv4 CIDRs at their bounds
    ['http://192.168.1.1/', ['0.0.0.0/0'], undefined],
    ['http://10.0.0.1/', ['10.0.0.1/32'], undefined],
    ['http://10.0.0.2/', ['10.0.0.1/32'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.0/31'], undefined],
    ['http://10.0.0.2/', ['10.0.0.0/31'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.1/33'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.1/-1'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.1/8.5'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.1/x'], 'invalid-ip'],
    ['http://10.0.0.1/', ['10.0.0.1/'], 'invalid-ip'],
    ['http://0xa000001/', ['10.0.0.1'], undefined],
    ['http://10.0.0.1./', ['10.0.0.1'], undefined],
    ['http://10.0.0.1/', ['::ffff:10.0.0.1'], 'invalid-ip'],
    ['http://10.0.0.1/', ['fd00::/8'], 'invalid-ip'],
    // IPv6 CIDRs at their bounds
    ['http://[fd00::1]/', ['::/0'], undefined],
    ['http://[fd00::1]/', ['fd00::1/128'], undefined],
    ['http://[fd00::2]/', ['fd00::1/128'], 'invalid-ip'],
    ['http://[fd00::1]/', ['fd00::/127'], undefined],
    ['http://[fd00::2]/', ['fd00::/127'], 'invalid-ip'],
    ['http://[fd00:0:0:1::1]/', ['fd00::/64'], 'invalid-ip'],
    ['http://[fd00::ffff:1]/', ['fd00::/64'], undefined],
    ['http://[fd00::1]/', ['fd00::1/129'], 'invalid-ip'],
    ['http://[fd00::1]/', ['fd00::1/-1'], 'invalid-ip'],
    ['http://[fd00::1]/', ['FD00:0:0:0:0:0:0:1'], undefined],
    ['http://[::ffff:a00:1]/', ['10.0.0.1'], 'invalid-ip'],
    ['http://[fd00::1]/', ['10.0.0.0/8'], 'invalid-ip'],
  ] as const)('%s with %j → %s', (url, allowed, expected) => {
    expect(checkVerificationUrl(url, allowed)).toBe(expected);
  });
});
