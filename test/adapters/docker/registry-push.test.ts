/**
 * The pieces of a push that need no engine: the push reply's digest and error (as the engine
 * writes them: one progress message per layer, the digest at the end, an error anywhere, lines
 * split across chunks), and the engine's rule for when a registry is spoken to over plain HTTP.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readPushReply } from '../../../src/adapters/docker/push-reply.js';
import { insecureIn, pushesInPlain, registryHost } from '../../../src/adapters/docker/registry-transport.js';

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const lines = (...messages: readonly unknown[]): string => messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('\r\n');
/** The text cut into chunks of `size` characters, as a socket might deliver it. */
const chunked = (text: string, size: number): Readable => Readable.from(Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, (i + 1) * size))));

describe('readPushReply', () => {
  const progress = Array.from({ length: 500 }, (_, i) => ({ status: 'Pushing', progressDetail: { current: i, total: 500 }, id: 'a1b2c3' }));

  it('finds the digest after any number of progress messages, in whichever form the engine wrote it, across chunk borders', async () => {
    const status = lines({ status: 'The push refers to repository [127.0.0.1:5000/tavern-build]' }, ...progress, { status: `b1: digest: ${DIGEST} size: 528` });
    expect(await readPushReply(chunked(status, 7))).toEqual({ digest: DIGEST });
    expect(await readPushReply(chunked(lines(...progress, { progressDetail: {}, aux: { Tag: 'b1', Digest: DIGEST, Size: 528 } }), 100))).toEqual({ digest: DIGEST });
  });

  it('reports the first error, even after a digest, and nothing when the reply names no digest', async () => {
    const refused = lines(...progress, { errorDetail: { message: 'dial tcp 127.0.0.1:5999: connect: connection refused' }, error: 'ignored' }, { error: 'second' });
    expect(await readPushReply(chunked(refused, 13))).toEqual({ error: 'dial tcp 127.0.0.1:5999: connect: connection refused' });
    expect(await readPushReply(chunked(lines({ status: `b1: digest: ${DIGEST} size: 528` }, { error: 'unauthorized: authentication required' }), 5))).toEqual({ error: 'unauthorized: authentication required' });
    expect(await readPushReply(chunked(lines(...progress, 'not json', { aux: { Digest: 'sha256:short' } }), 64))).toEqual({});
  });
});

describe('when the engine pushes over plain HTTP', () => {
  const defaults = { IndexConfigs: { 'docker.io': { Secure: true } }, InsecureRegistryCIDRs: ['127.0.0.0/8'] };

  it('takes the host out of host[:port]', () => {
    expect(registryHost('registry.example:5000')).toBe('registry.example');
    expect(registryHost('registry.example')).toBe('registry.example');
    expect(registryHost('[::1]:5000')).toBe('::1');
    expect(registryHost('[fd00::2]')).toBe('fd00::2');
  });

  it('follows an index config for the registry first, then the insecure CIDRs', () => {
    expect(insecureIn(defaults, '127.0.0.1:5000', ['127.0.0.1'])).toBe(true);
    expect(insecureIn(defaults, '10.77.0.1:5000', ['10.77.0.1'])).toBe(false);
    expect(insecureIn({ ...defaults, InsecureRegistryCIDRs: ['10.77.0.0/16', 'fd00::/8'] }, 'reg.internal:5000', ['192.0.2.1', '10.77.3.4'])).toBe(true);
    expect(insecureIn({ InsecureRegistryCIDRs: ['fd00::/8'] }, '[fd00::2]:5000', ['fd00::2'])).toBe(true);
    expect(insecureIn({ ...defaults, IndexConfigs: { 'reg.internal:5000': { Secure: false } } }, 'reg.internal:5000', [])).toBe(true);
    expect(insecureIn({ ...defaults, IndexConfigs: { '127.0.0.1:5000': { Secure: true } } }, '127.0.0.1:5000', ['127.0.0.1'])).toBe(false);
    expect(insecureIn({}, '127.0.0.1:5000', ['127.0.0.1'])).toBe(false);
  });

  it('resolves a name as the engine does: localhost is loopback, an unknown name counts as secure', async () => {
    expect(await pushesInPlain(defaults, 'localhost:5000')).toBe(true);
    expect(await pushesInPlain(defaults, '127.0.0.1:5000')).toBe(true);
    expect(await pushesInPlain(defaults, 'no-such-registry.invalid:5000')).toBe(false);
    expect(await pushesInPlain(undefined, '127.0.0.1:5000')).toBe(false);
  });
});
