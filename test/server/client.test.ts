/** The client address of a request (`client.ts`): proxy headers, the socket, and what is refused. */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressOf } from '../../src/server/client.js';
import { fromRequest } from '../../src/server/incoming.js';

/** The rules spelled out step by step: the first proxy entry, trimmed, port and brackets dropped, an IP, IPv4-mapped unmapped. */
const model = (forwarded: string | undefined, remote: string | undefined): { ok: true; value: string } | { ok: false; code: string } => {
  const raw = forwarded?.split(',')[0] ?? remote;
  if (raw === undefined || raw.trim() === '') return { ok: false, code: 'API_MISSING_HEADER' };
  const s = raw.trim();
  const ip = /^\[([^\]]+)\](?::\d+)?$/.exec(s)?.[1] ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(s)?.[1] ?? s;
  if (isIP(ip) === 0) return { ok: false, code: 'API_INVALID_IP' };
  return { ok: true, value: /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)?.[1] ?? ip.toLowerCase() };
};

const entry = fc.oneof(
  fc.ipV4(), fc.ipV4Extended(), fc.ipV6(),
  fc.ipV4().map((ip) => ` ${ip} `), fc.ipV4().map((ip) => `${ip}:8080`), fc.ipV6().map((ip) => `[${ip}]:443`),
  fc.ipV4().map((ip) => `::FFFF:${ip}`), fc.ipV4().map((ip) => ip.replace(/^(\d)\./, '0$1.')),
  fc.constantFrom('', ' ', '1.2.3', '256.1.1.1', 'unknown'), fc.string(),
);

describe('the client address', () => {
  it('is what the rules make of the first x-forwarded-for entry, else of the socket address', () => {
    fc.assert(fc.property(fc.option(fc.array(entry, { minLength: 1, maxLength: 3 }).map((es) => es.join(',')), { nil: undefined }), fc.option(entry, { nil: undefined }), (forwarded, remote) => {
      const request = fromRequest(new Request('http://localhost/', forwarded === undefined ? {} : { headers: { 'x-forwarded-for': forwarded } }), remote === undefined ? {} : { remoteAddress: remote });
      const got = addressOf(request, true);
      const want = model(forwarded, remote);
      if (want.ok) expect(got).toEqual(want);
      else expect(got.ok ? got : got.error.code).toBe(want.code);
    }), { numRuns: 2_000 });
  });
});
