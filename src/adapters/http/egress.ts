/**
 * The egress guard for every outbound HTTP call the matchmaker makes to a URL it was configured with
 * (verification callbacks, captcha providers): WHATWG-parse the URL, resolve the host once, refuse
 * it if any address is not public (reliability.md §1.3), then connect to the very address that was
 * checked (a pinned `lookup`), so a second DNS answer can never rebind the connection.
 */
import { lookup } from 'node:dns/promises';
import { type ClientRequest, type IncomingMessage, request as httpRequest, validateHeaderName, validateHeaderValue } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ipv6Value, parseIpv6 } from '../../core/net/ip-literal.js';
import { classifyIp, type AddressReason, type IpAddress } from '../../core/net/special-addresses.js';

/** Why an address is not a public destination: the core table's reason, or not an address at all. */
export type DenyReason = AddressReason | 'invalid';

/** A resolved address; `family` is 4 or 6. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to every address it has (the default is `dns.lookup` with `all`). */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/**
 * Whether an IP address is a public destination, or why not: the core's table of non-global
 * addresses (`core/net/special-addresses.ts`, which configuration validation uses too) decides;
 * a zone (`%eth0`) is ignored; anything that is not an address is `invalid`.
 *
 * @example
 * classifyAddress('93.184.216.34') // 'public'
 * classifyAddress('::ffff:7f00:1') // 'ipv4-mapped'
 * classifyAddress('64:ff9b::7f00:1') // 'loopback' (NAT64 is judged by the IPv4 address it carries)
 */
export const classifyAddress = (ip: string): 'public' | DenyReason => {
  const bare = ip.replace(/%.*$/, '');
  const family = isIP(bare);
  const pieces = family === 6 ? parseIpv6(bare) : undefined;
  const address: IpAddress | undefined =
    family === 4 ? { family: 4, value: bare.split('.').reduce((value, octet) => (value << 8n) | BigInt(octet), 0n) }
    : pieces !== undefined ? { family: 6, value: ipv6Value(pieces) }
    : undefined;
  if (address === undefined) return 'invalid';
  const kind = classifyIp(address);
  return kind === 'global' ? 'public' : kind;
};

/** Where outbound calls may go: by default, public addresses on ports 80 and 443 only. */
export interface EgressOptions {
  /** The resolver (default: `dns.lookup(host, { all: true })`). */
  readonly resolve?: Resolve;
  /**
   * Exempt destinations (local development, tests): CIDRs (`127.0.0.0/8`), addresses, or host
   * names (`localhost`). An exempt destination may use any address and any port.
   */
  readonly allow?: readonly string[];
  /** Extra refused CIDRs or addresses (e.g. the service's own public address); they beat `allow`. */
  readonly deny?: readonly string[];
  /** Ports a non-exempt destination may use (default 80 and 443). */
  readonly ports?: readonly number[];
}

/** {@link EgressOptions}, compiled. */
export interface EgressPolicy {
  readonly resolve: Resolve;
  readonly allowHosts: ReadonlySet<string>;
  readonly allowNets: BlockList;
  readonly denyNets: BlockList;
  readonly ports: ReadonlySet<number>;
}

const defaultResolve: Resolve = async (hostname) => lookup(hostname, { all: true, verbatim: true });

const normalHost = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** Adds an address or CIDR to `list`; false if `entry` is neither. */
const addNet = (list: BlockList, entry: string): boolean => {
  const [base = '', prefix, ...rest] = entry.replace(/^\[|\](?=\/|$)/g, '').split('/');
  const family = isIP(base);
  if (family === 0 || rest.length > 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) {
    list.addAddress(base, type);
    return true;
  }
  const bits = Number(prefix);
  if (!/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) return false;
  list.addSubnet(base, bits, type);
  return true;
};

/**
 * Compiles egress options; throws on a malformed `allow`/`deny` entry (that is a configuration bug).
 *
 * @example
 * const policy = egressPolicy({ allow: ['127.0.0.1/32'] });
 */
export const egressPolicy = (options: EgressOptions = {}): EgressPolicy => {
  const allowHosts = new Set<string>();
  const allowNets = new BlockList();
  const denyNets = new BlockList();
  for (const entry of options.allow ?? []) {
    if (addNet(allowNets, entry)) continue;
    if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i.test(entry)) throw new Error(`egress allow entry ${JSON.stringify(entry)} is not a CIDR, address or host name`);
    allowHosts.add(normalHost(entry));
  }
  for (const entry of options.deny ?? []) {
    if (!addNet(denyNets, entry)) throw new Error(`egress deny entry ${JSON.stringify(entry)} is not a CIDR or address`);
  }
  return { resolve: options.resolve ?? defaultResolve, allowHosts, allowNets, denyNets, ports: new Set(options.ports ?? [80, 443]) };
};

const DEFAULT_POLICY = egressPolicy();

/** A URL that passed the static checks: `hostname` is bare (no brackets), `port` is explicit. */
export interface Target {
  readonly url: URL;
  readonly hostname: string;
  readonly port: number;
  /** The address when the host is an IP literal (already vetted). */
  readonly literal?: ResolvedAddress;
}

/** The outcome of a check: a value, or why the destination is refused. */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const refuse = (reason: string): { readonly ok: false; readonly reason: string } => ({ ok: false, reason });

/** Why `addresses` (what `hostname` resolved to) may not be reached on `port`, if they may not. */
const refusal = (policy: EgressPolicy, hostname: string, port: number, addresses: readonly ResolvedAddress[]): string | undefined => {
  const exemptHost = policy.allowHosts.has(normalHost(hostname));
  for (const { address } of addresses) {
    const bare = address.replace(/%.*$/, '');
    const family = isIP(bare);
    if (family === 0) return `${hostname} resolves to ${JSON.stringify(address)}, which is not an address`;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (policy.denyNets.check(bare, type)) return `${hostname} resolves to ${address}, which the egress policy denies`;
    if (exemptHost || policy.allowNets.check(bare, type)) continue;
    const kind = classifyAddress(address);
    if (kind !== 'public') return `${hostname === address ? address : `${hostname} resolves to ${address}, which`} is not public (${kind})`;
    if (!policy.ports.has(port)) return `port ${port} is not allowed`;
  }
  return undefined;
};

/**
 * The static checks on a URL: http(s) only, no userinfo, a host of at most 253 characters, and,
 * for an IP literal (in any form WHATWG `URL` normalises: `2130706433`, `0x7f.1`,
 * `[::ffff:127.0.0.1]`), the address and port checks. Never throws.
 *
 * @example
 * checkUrl('http://0x7f.1/') // { ok: false, reason: '127.0.0.1 is not public (loopback)' }
 */
export const checkUrl = (url: string, policy: EgressPolicy = DEFAULT_POLICY): Checked<Target> => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return refuse(`scheme ${parsed.protocol} is not allowed`);
  if (parsed.username !== '' || parsed.password !== '') return refuse('URLs with credentials are not allowed');
  const hostname = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (normalHost(hostname) === '') return refuse('the URL has no host');
  if (hostname.length > 253) return refuse('the host name is too long');
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  const family = isIP(hostname);
  if (family === 0) return { ok: true, value: { url: parsed, hostname, port } };
  const literal = { address: hostname, family };
  const why = refusal(policy, hostname, port, [literal]);
  return why === undefined ? { ok: true, value: { url: parsed, hostname, port, literal } } : refuse(why);
};

/** A destination cleared to connect to: the URL, and the one address to dial. */
export interface Vetted {
  readonly target: Target;
  readonly address: ResolvedAddress;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * {@link checkUrl}, then resolve the host once through the policy's resolver and refuse it if any
 * answer is refused; the first answer is the address to dial (and the only one). Never throws.
 *
 * @example
 * const v = await vetUrl('https://example.com/verify', egressPolicy());
 * if (v.ok) v.value.address // { address: '93.184.216.34', family: 4 }
 */
export const vetUrl = async (url: string, policy: EgressPolicy = DEFAULT_POLICY): Promise<Checked<Vetted>> => {
  const checked = checkUrl(url, policy);
  if (!checked.ok) return checked;
  const target = checked.value;
  if (target.literal !== undefined) return { ok: true, value: { target, address: target.literal } };
  let answers: readonly ResolvedAddress[];
  try {
    answers = await policy.resolve(target.hostname);
  } catch (error) {
    return refuse(`could not resolve ${target.hostname}: ${messageOf(error)}`);
  }
  // The family is the address's own, whatever the resolver claimed.
  const addresses = answers.map(({ address }) => ({ address, family: isIP(address.replace(/%.*$/, '')) }));
  const first = addresses[0];
  if (first === undefined) return refuse(`${target.hostname} has no addresses`);
  const why = refusal(policy, target.hostname, target.port, addresses);
  return why === undefined ? { ok: true, value: { target, address: first } } : refuse(why);
};

/**
 * A socket `lookup` that answers every query with `pinned`, whatever host it is asked about: the
 * connection goes to the vetted address while `Host` and TLS SNI keep the original name.
 *
 * @example
 * httpRequest({ host: 'example.com', lookup: pinnedLookup({ address: '93.184.216.34', family: 4 }) })
 */
export const pinnedLookup = (pinned: ResolvedAddress): LookupFunction => (_hostname, options, callback) => {
  process.nextTick(() => {
    if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  });
};

/** One outbound call. `headers` may not set transport headers (`Host`, `Content-Length`, ...). */
export interface EgressRequest {
  readonly method: 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Total budget: resolution, connection, and the response up to `maxBodyBytes`. */
  readonly timeoutMs: number;
  /** Response bytes to read; past it the body is cut (`truncated`); 0 reads none. */
  readonly maxBodyBytes: number;
}

/** What happened to an outbound call. */
export type EgressResponse =
  | { readonly kind: 'response'; readonly status: number; readonly body: Buffer; readonly truncated: boolean }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'failed'; readonly reason: string };

/** Headers the transport owns: a caller setting them could smuggle requests or break framing. */
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection']);

const headerProblem = (headers: Readonly<Record<string, string>>): string | undefined => {
  for (const [name, value] of Object.entries(headers)) {
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) return `header ${name} may not be set`;
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      return `header ${JSON.stringify(name)} is not a valid header`;
    }
  }
  return undefined;
};

/**
 * Makes one request through the egress guard: vets the URL ({@link vetUrl}), dials only the vetted
 * address, follows no redirects (a 3xx is just a status), gives up after `timeoutMs` in all, reads at
 * most `maxBodyBytes` of the response and always releases the socket. Never throws.
 *
 * @example
 * await egressRequest('https://example.com/hook', { method: 'POST', headers: {}, body: '{}', timeoutMs: 10_000, maxBodyBytes: 0 }, policy)
 * // { kind: 'response', status: 204, body: <Buffer >, truncated: false }
 */
export const egressRequest = (url: string, req: EgressRequest, policy: EgressPolicy = DEFAULT_POLICY): Promise<EgressResponse> =>
  new Promise((resolve) => {
    let settled = false;
    let outgoing: ClientRequest | undefined;
    const finish = (response: EgressResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      resolve(response);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout' }), req.timeoutMs);
    const problem = headerProblem(req.headers);
    if (problem !== undefined) {
      finish({ kind: 'failed', reason: problem });
      return;
    }
    const fail = (error: unknown): void => finish({ kind: 'failed', reason: `request failed: ${messageOf(error)}` });
    vetUrl(url, policy)
      .then((vetted) => {
        if (settled) return;
        if (!vetted.ok) {
          finish({ kind: 'failed', reason: `destination refused: ${vetted.reason}` });
          return;
        }
        const { target, address } = vetted.value;
        const body = Buffer.from(req.body);
        const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
        outgoing = send({
          method: req.method,
          hostname: target.hostname,
          port: target.port,
          path: `${target.url.pathname}${target.url.search}`,
          headers: { ...req.headers, 'content-length': String(body.length) },
          lookup: pinnedLookup(address),
          agent: false,
        });
        outgoing.on('error', fail);
        outgoing.on('response', (res) => receive(res, req.maxBodyBytes, finish, fail));
        outgoing.end(body);
      })
      .catch(fail);
  });

const receive = (
  res: IncomingMessage,
  maxBodyBytes: number,
  finish: (response: EgressResponse) => void,
  fail: (error: unknown) => void,
): void => {
  const status = res.statusCode ?? 0;
  const chunks: Buffer[] = [];
  let size = 0;
  const done = (truncated: boolean): void =>
    finish({ kind: 'response', status, body: Buffer.concat(chunks).subarray(0, maxBodyBytes), truncated });
  if (maxBodyBytes === 0) {
    done(false);
    return;
  }
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > maxBodyBytes) done(true);
  });
  res.on('end', () => done(false));
  res.on('error', fail);
  res.on('close', () => finish({ kind: 'failed', reason: 'the connection closed before the response ended' }));
};
