import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkUrl,
  classifyAddress,
  type EgressOptions,
  egressPolicy,
  egressRequest,
  pinnedLookup,
  type ResolvedAddress,
  vetUrl,
} from '../../../src/adapters/http/egress.js';
import { listen, listenTcp, type TcpSpy, type TestServer } from './servers.js';

/** A resolver that answers from a script (one answer per call, the last one repeating) and logs its calls. */
const scripted = (...answers: readonly (readonly string[] | Error)[]) => {
  const calls: string[] = [];
  const resolve = (hostname: string): Promise<readonly ResolvedAddress[]> => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve(answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return { resolve, calls };
};

const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });

interface Case {
  readonly url: string;
  /** What the resolver answers (default: a public address); literal hosts must never reach it. */
  readonly dns?: readonly string[] | Error;
  readonly options?: Omit<EgressOptions, 'resolve'>;
  /** `ok`, or a fragment of the refusal reason. */
  readonly expect: string;
}

const PUBLIC = ['93.184.216.34'];

const cases: readonly Case[] = [
  // IPv4 ranges, with their edges
  { url: 'http://10.0.0.1/', expect: '(private)' },
  { url: 'http://10.255.255.255/', expect: '(private)' },
  { url: 'http://172.16.0.1/', expect: '(private)' },
  { url: 'http://172.31.255.255/', expect: '(private)' },
  { url: 'http://172.15.255.255/', expect: 'ok' },
  { url: 'http://172.32.0.1/', expect: 'ok' },
  { url: 'http://192.168.1.1/', expect: '(private)' },
  { url: 'http://127.0.0.1/', expect: '(loopback)' },
  { url: 'http://127.255.255.254/', expect: '(loopback)' },
  { url: 'http://169.254.0.1/', expect: '(link-local)' },
  { url: 'http://169.254.169.254/latest/meta-data/', expect: '(metadata)' },
  { url: 'http://100.100.100.200/', expect: '(metadata)' },
  { url: 'http://100.64.0.1/', expect: '(cgnat)' },
  { url: 'http://100.127.255.255/', expect: '(cgnat)' },
  { url: 'http://100.63.255.254/', expect: 'ok' },
  { url: 'http://100.128.0.1/', expect: 'ok' },
  { url: 'http://0.0.0.0/', expect: '(unspecified)' },
  { url: 'http://0.1.2.3/', expect: '(unspecified)' },
  { url: 'http://224.0.0.1/', expect: '(multicast)' },
  { url: 'http://239.255.255.250/', expect: '(multicast)' },
  { url: 'http://255.255.255.255/', expect: '(broadcast)' },
  { url: 'http://240.0.0.1/', expect: '(reserved)' },
  { url: 'http://192.0.0.8/', expect: '(reserved)' },
  { url: 'http://198.18.0.1/', expect: '(benchmark)' },
  { url: 'http://198.19.255.255/', expect: '(benchmark)' },
  { url: 'http://198.20.0.1/', expect: 'ok' },
  { url: 'http://192.0.2.1/', expect: '(documentation)' },
  { url: 'http://198.51.100.7/', expect: '(documentation)' },
  { url: 'http://203.0.113.9/', expect: '(documentation)' },
  { url: 'http://93.184.216.34/', expect: 'ok' },
  { url: 'https://1.1.1.1/', expect: 'ok' },
  // IPv4 encodings WHATWG URL normalises
  { url: 'http://2130706433/', expect: '127.0.0.1 is not public (loopback)' },
  { url: 'http://0x7f.1/', expect: '(loopback)' },
  { url: 'http://0177.0.0.1/', expect: '(loopback)' },
  { url: 'http://127.1/', expect: '(loopback)' },
  { url: 'http://0x7f000001/', expect: '(loopback)' },
  { url: 'http://0/', expect: '(unspecified)' },
  { url: 'http://0xa9fea9fe/', expect: '(metadata)' },
  { url: 'http://2852039166/', expect: '(metadata)' },
  { url: 'http://0x0a.0.0.1/', expect: '(private)' },
  { url: 'http://%31%32%37.0.0.1/', expect: '(loopback)' },
  { url: 'http://127.0.0.1./', expect: '(loopback)' },
  { url: 'http://127.0.0.1:8080/', expect: '(loopback)' },
  // IPv6, and IPv6 carrying IPv4
  { url: 'http://[::1]/', expect: '(loopback)' },
  { url: 'http://[::]/', expect: '(unspecified)' },
  // IPv4-mapped, IPv4-compatible and 6to4 are refused whatever they carry; NAT64 is judged by it (core/net/special-addresses.ts)
  { url: 'http://[::ffff:127.0.0.1]/', expect: '::ffff:7f00:1 is not public (ipv4-mapped)' },
  { url: 'http://[::ffff:7f00:1]/', expect: '(ipv4-mapped)' },
  { url: 'http://[0:0:0:0:0:ffff:169.254.169.254]/', expect: '(ipv4-mapped)' },
  { url: 'http://[::ffff:a00:1]/', expect: '(ipv4-mapped)' },
  { url: 'http://[::ffff:8.8.8.8]/', expect: '(ipv4-mapped)' },
  { url: 'http://[::127.0.0.1]/', expect: '(ipv4-compatible)' },
  { url: 'http://[::8.8.8.8]/', expect: '(ipv4-compatible)' },
  { url: 'http://[64:ff9b::127.0.0.1]/', expect: '(loopback)' },
  { url: 'http://[64:ff9b::a9fe:a9fe]/', expect: '(metadata)' },
  { url: 'http://[64:ff9b::8.8.8.8]/', expect: 'ok' },
  { url: 'http://[64:ff9b:1::1]/', expect: '(private)' },
  { url: 'http://[2002:7f00:1::]/', expect: '(6to4)' },
  { url: 'http://[2002:c0a8:101::1]/', expect: '(6to4)' },
  { url: 'http://[2002:a9fe:a9fe::]/', expect: '(6to4)' },
  { url: 'http://[2002:808:808::1]/', expect: '(6to4)' },
  { url: 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', expect: '(teredo)' },
  { url: 'http://[fc00::1]/', expect: '(unique-local)' },
  { url: 'http://[fd12:3456::1]/', expect: '(unique-local)' },
  { url: 'http://[fd00:ec2::254]/', expect: '(metadata)' },
  { url: 'http://[fe80::1]/', expect: '(link-local)' },
  { url: 'http://[febf:ffff::1]/', expect: '(link-local)' },
  { url: 'http://[fec0::1]/', expect: '(site-local)' },
  { url: 'http://[ff02::1]/', expect: '(multicast)' },
  { url: 'http://[2001:db8::1]/', expect: '(documentation)' },
  { url: 'http://[100::1]/', expect: '(reserved)' },
  { url: 'http://[2606:4700:4700::1111]/', expect: 'ok' },
  { url: 'http://[2606:4700:4700::1111]:8443/', expect: 'port 8443 is not allowed' },
  // URL tricks
  { url: 'http://good@127.0.0.1/', expect: 'credentials' },
  { url: 'http://user:pw@example.com/', expect: 'credentials' },
  { url: 'http://user:pw@127.0.0.1:80@evil.com/', expect: 'credentials' },
  { url: 'http://evil.com#@127.0.0.1/', expect: 'ok' }, // the host is evil.com (resolved: public)
  { url: 'ftp://example.com/', expect: 'scheme ftp: is not allowed' },
  { url: 'file:///etc/passwd', expect: 'scheme file:' },
  { url: 'gopher://127.0.0.1:6379/_INFO', expect: 'scheme gopher:' },
  { url: 'javascript:alert(1)', expect: 'scheme javascript:' },
  { url: 'data:text/plain,hi', expect: 'scheme data:' },
  { url: 'http://', expect: 'not a valid URL' },
  { url: 'http://:80/', expect: 'not a valid URL' },
  { url: 'http://[]/', expect: 'not a valid URL' },
  { url: 'http://1.2.3.4.5/', expect: 'not a valid URL' },
  { url: 'http://256.0.0.1/', expect: 'not a valid URL' },
  { url: '', expect: 'not a valid URL' },
  { url: '/relative/path', expect: 'not a valid URL' },
  { url: `http://${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}/`, expect: 'too long' },
  { url: 'http://example.com:8080/', expect: 'port 8080 is not allowed' },
  { url: 'http://93.184.216.34:22/', expect: 'port 22 is not allowed' },
  { url: 'http://93.184.216.34:8080/', options: { ports: [8080] }, expect: 'ok' },
  { url: 'http://example.com:443/', expect: 'ok' },
  { url: 'HTTPS://EXAMPLE.COM/verify', expect: 'ok' },
  { url: 'http://example.com./', expect: 'ok' },
  // Hostnames: what the resolver answers is what counts
  { url: 'http://LOCALHOST/', dns: ['127.0.0.1'], expect: 'localhost resolves to 127.0.0.1, which is not public (loopback)' },
  { url: 'http://localhost./', dns: ['127.0.0.1'], expect: '(loopback)' },
  { url: 'http://127.0.0.1.nip.io/', dns: ['127.0.0.1'], expect: '(loopback)' },
  { url: 'http://internal.example/', dns: ['10.0.0.5'], expect: '(private)' },
  { url: 'http://metadata.google.internal/', dns: ['169.254.169.254'], expect: '(metadata)' },
  { url: 'http://cgnat.example/', dns: ['100.64.1.1'], expect: '(cgnat)' },
  { url: 'http://v6.example/', dns: ['::1'], expect: '(loopback)' },
  { url: 'http://mapped.example/', dns: ['::ffff:127.0.0.1'], expect: '(ipv4-mapped)' },
  { url: 'http://scoped.example/', dns: ['fe80::1%eth0'], expect: '(link-local)' },
  { url: 'http://mixed.example/', dns: ['93.184.216.34', '127.0.0.1'], expect: '(loopback)' },
  { url: 'http://mixed6.example/', dns: ['2606:4700::1', 'fd00::1'], expect: '(unique-local)' },
  { url: 'http://garbage.example/', dns: ['not-an-address'], expect: 'not an address' },
  { url: 'http://empty.example/', dns: [], expect: 'has no addresses' },
  { url: 'http://nowhere.example/', dns: notFound, expect: 'could not resolve nowhere.example: getaddrinfo ENOTFOUND' },
  { url: 'http://dual.example/', dns: ['2606:4700::1', '93.184.216.34'], expect: 'ok' },
  // Allow and deny lists
  { url: 'http://127.0.0.1:8080/', options: { allow: ['127.0.0.1/32'] }, expect: 'ok' },
  { url: 'http://127.0.0.2/', options: { allow: ['127.0.0.1/32'] }, expect: '(loopback)' },
  { url: 'http://[::ffff:127.0.0.1]:9/', options: { allow: ['127.0.0.0/8'] }, expect: 'ok' },
  { url: 'http://[::1]:8080/', options: { allow: ['::1'] }, expect: 'ok' },
  { url: 'http://localhost:3000/', dns: ['127.0.0.1', '::1'], options: { allow: ['localhost'] }, expect: 'ok' },
  { url: 'http://LOCALHOST.:3000/', dns: ['127.0.0.1'], options: { allow: ['localhost'] }, expect: 'ok' },
  { url: 'http://good@localhost/', options: { allow: ['localhost'] }, expect: 'credentials' },
  { url: 'http://lan.example/', dns: ['10.1.2.3', '127.0.0.1'], options: { allow: ['10.0.0.0/8'] }, expect: '(loopback)' },
  { url: 'http://93.184.216.34/', options: { deny: ['93.184.216.0/24'] }, expect: 'egress policy denies' },
  { url: 'http://127.0.0.1/', options: { allow: ['127.0.0.0/8'], deny: ['127.0.0.1'] }, expect: 'egress policy denies' },
];

describe('SSRF table', () => {
  it('has at least 60 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  it.each(cases)('$url → $expect', async ({ url, dns, options, expect: expected }) => {
    const resolver = scripted(dns ?? PUBLIC);
    const policy = egressPolicy({ ...options, resolve: resolver.resolve });
    const result = await vetUrl(url, policy);
    if (expected === 'ok') {
      expect(result).toMatchObject({ ok: true });
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toContain(expected);
    }
    // An IP literal is classified as written: the resolver is never asked about it.
    const checked = checkUrl(url, policy);
    if (checked.ok && checked.value.literal !== undefined) expect(resolver.calls).toEqual([]);
    if (result.ok) {
      // The address to dial is the literal, or the resolver's first answer.
      const answers = dns instanceof Error ? [] : (dns ?? PUBLIC);
      expect(result.value.address.address).toBe(result.value.target.literal?.address ?? answers[0]);
    }
  });

  it('hands the resolver the parsed host, never the raw string', async () => {
    const resolver = scripted(PUBLIC);
    await vetUrl('http://evil.com#@127.0.0.1/', egressPolicy({ resolve: resolver.resolve }));
    await vetUrl('HTTPS://Example.COM:443/x', egressPolicy({ resolve: resolver.resolve }));
    expect(resolver.calls).toEqual(['evil.com', 'example.com']);
  });
});

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['::ffff:0:7f00:1', 'reserved'],
    ['fe80::1%eth0', 'link-local'],
    ['2001:2::1', 'benchmark'],
    ['3fff::1', 'documentation'],
    ['168.63.129.16', 'metadata'],
    ['not an ip', 'invalid'],
    ['', 'invalid'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it('judges NAT64 by the IPv4 address it carries, and refuses the mapped and 6to4 forms whatever they carry', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
        const hi = ((a << 8) | b).toString(16);
        const lo = ((c << 8) | d).toString(16);
        expect(classifyAddress(`64:ff9b::${v4}`)).toBe(classifyAddress(v4));
        expect(classifyAddress(`64:ff9b::${hi}:${lo}`)).toBe(classifyAddress(v4));
        expect(classifyAddress(`::ffff:${v4}`)).toBe('ipv4-mapped');
        expect(classifyAddress(`::ffff:${hi}:${lo}`)).toBe('ipv4-mapped');
        expect(classifyAddress(`2002:${hi}:${lo}::1`)).toBe('6to4');
      }),
    );
  });

  it('agrees with WHATWG URL on the decimal form of every IPv4 address', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const dotted = [24, 16, 8, 0].map((s) => (n >>> s) & 0xff).join('.');
        const viaUrl = checkUrl(`http://${n}/`);
        const direct = classifyAddress(dotted);
        expect(viaUrl.ok).toBe(direct === 'public');
      }),
    );
  });

  it('never throws on arbitrary strings or URLs', () => {
    fc.assert(
      fc.property(fc.string(), fc.webUrl(), (s, url) => {
        classifyAddress(s);
        checkUrl(s);
        checkUrl(url);
      }),
    );
  });
});

describe('egressPolicy', () => {
  it.each([['127.0.0.1/33'], ['::1/129'], ['10.0.0.0/x'], ['1.2.3.4/8/8'], ['not a host!']])('refuses the allow entry %s', (entry) => {
    expect(() => egressPolicy({ allow: [entry] })).toThrow(/egress allow entry/);
  });

  it('refuses a deny entry that is a host name', () => {
    expect(() => egressPolicy({ deny: ['localhost'] })).toThrow(/egress deny entry/);
  });
});

describe('DNS rebinding', () => {
  let servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  it('resolves once and keeps the first (public) answer even if a second lookup would rebind', async () => {
    const resolver = scripted(['93.184.216.34'], ['127.0.0.1']);
    const result = await vetUrl('https://rebind.example/hook', egressPolicy({ resolve: resolver.resolve }));
    expect(result).toMatchObject({ ok: true, value: { address: { address: '93.184.216.34', family: 4 } } });
    expect(resolver.calls).toEqual(['rebind.example']);
  });

  it('refuses when the first answer is already private', async () => {
    const resolver = scripted(['127.0.0.1'], ['93.184.216.34']);
    expect(await vetUrl('https://rebind.example/', egressPolicy({ resolve: resolver.resolve }))).toMatchObject({ ok: false });
    expect(resolver.calls).toHaveLength(1);
  });

  it('pins the socket lookup to the vetted address, whatever host it is asked about', async () => {
    const lookup = pinnedLookup({ address: '93.184.216.34', family: 4 });
    const all = await new Promise((resolve) => lookup('127.0.0.1.nip.io', { all: true }, (_e, address) => resolve(address)));
    const one = await new Promise((resolve) => lookup('other.example', {}, (_e, address, family) => resolve([address, family])));
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(one).toEqual(['93.184.216.34', 4]);
  });

  it('connects only to the vetted address: a rebinding resolver never reaches the second server', async () => {
    const vetted = await listen((_req, res) => res.writeHead(200).end('vetted'));
    servers.push(vetted);
    const rebound = await listen((_req, res) => res.writeHead(200).end('rebound'), '127.0.0.2', vetted.port);
    servers.push(rebound);
    const resolver = scripted(['127.0.0.1'], ['127.0.0.2']);
    const policy = egressPolicy({ resolve: resolver.resolve, allow: ['127.0.0.1/32'] });
    const url = `http://rebind.test:${vetted.port}/hook`;
    const request = { method: 'POST', headers: {}, body: '{}', timeoutMs: 5_000, maxBodyBytes: 1024 } as const;

    const first = await egressRequest(url, request, policy);
    expect(first).toMatchObject({ kind: 'response', status: 200 });
    if (first.kind === 'response') expect(first.body.toString()).toBe('vetted');
    expect(vetted.requests[0]?.headers.host).toBe(`rebind.test:${vetted.port}`);

    // The next call resolves afresh, gets the rebound answer, and is refused before any connection.
    const second = await egressRequest(url, request, policy);
    expect(second).toMatchObject({ kind: 'failed', reason: expect.stringContaining('127.0.0.2') as unknown });
    expect(resolver.calls).toEqual(['rebind.test', 'rebind.test']);
    expect(vetted.connections).toBe(1);
    expect(rebound.connections).toBe(0);
  });

  it('opens no connection to a loopback server through any encoding of its address', async () => {
    const server = await listen((_req, res) => res.writeHead(200).end());
    servers.push(server);
    const p = server.port;
    const resolver = scripted(['127.0.0.1']);
    const policy = egressPolicy({ resolve: resolver.resolve });
    const urls = [
      `http://127.0.0.1:${p}/`, `http://2130706433:${p}/`, `http://0x7f.1:${p}/`, `http://0177.0.0.1:${p}/`,
      `http://127.1:${p}/`, `http://127.0.0.1.:${p}/`, `http://[::ffff:127.0.0.1]:${p}/`, `http://[::ffff:7f00:1]:${p}/`,
      `http://localhost:${p}/`, `http://LOCALHOST.:${p}/`, `http://good@127.0.0.1:${p}/`, `http://127.0.0.1.nip.io:${p}/`,
    ];
    for (const url of urls) {
      const result = await egressRequest(url, { method: 'POST', headers: {}, body: '', timeoutMs: 2_000, maxBodyBytes: 0 }, policy);
      expect(result, url).toMatchObject({ kind: 'failed' });
    }
    expect(server.connections).toBe(0);
  });
});

describe('https', () => {
  let spy: TcpSpy | undefined;
  afterEach(async () => {
    await spy?.close();
    spy = undefined;
  });

  it('dials the vetted address and sends the original host name as TLS SNI', async () => {
    spy = await listenTcp();
    const resolver = scripted(['127.0.0.1']);
    const policy = egressPolicy({ resolve: resolver.resolve, allow: ['127.0.0.1/32'] });
    const result = await egressRequest(
      `https://sni-check.example:${spy.port}/`,
      { method: 'POST', headers: {}, body: '', timeoutMs: 5_000, maxBodyBytes: 0 },
      policy,
    );
    expect(result).toMatchObject({ kind: 'failed' });
    expect(spy.firstBytes).toHaveLength(1);
    expect(spy.firstBytes[0]?.includes('sni-check.example')).toBe(true);
  });
});
