import { describe, expect, it } from 'vitest';
import { addDomain, domainProblem, MAX_DOMAINS, removeDomain } from '../../src/services/domains.js';
import { cloud, expectError, expectOk, T0 } from './cloud.js';

const OWN = { publicOrigin: 'https://api.tavern.test:8443', jobDomain: 'jobs.tavern.test', cdnDomain: 'cdn.example.net' };

describe('domainProblem', () => {
  it.each([
    ['', 'empty'],
    [`${'a.'.repeat(127)}com`, 'longer than 255 characters'],
    ['Play.example.com', 'only lowercase a-z, 0-9, - and . are allowed'],
    ['play_1.example.com', 'only lowercase a-z, 0-9, - and . are allowed'],
    ['localhost', 'not a domain name'],
    ['-play.example.com', 'not a domain name'],
    ['play..example.com', 'not a domain name'],
    [`${'a'.repeat(64)}.com`, 'not a domain name'],
    ['api.tavern.test', 'a Tavern domain'],
    ['x.api.tavern.test', 'a Tavern domain'],
    ['cdn.example.net', 'a Tavern domain'],
    ['my-game.cdn.example.net', 'a Tavern domain'],
    ['jobs.tavern.test', 'a Tavern domain'],
  ])('%s: %s', (domain, reason) => {
    expect(domainProblem(domain, OWN)).toBe(reason);
  });

  it.each(['play.example.com', 'a.b', 'x.jobs.tavern.test', 'tavern.test', 'example.net'])('accepts %s', (domain) => {
    expect(domainProblem(domain, OWN)).toBeUndefined();
  });

  it('has no CDN domain to protect when none is configured', () => {
    expect(domainProblem('my-game.cdn.example.net', { publicOrigin: OWN.publicOrigin, jobDomain: OWN.jobDomain })).toBeUndefined();
  });
});

const namespace = async () => {
  const c = cloud();
  const game = await c.game();
  const ns = await c.namespace(game.id, (await c.version(game.id)).id);
  return { c, game, ns };
};

describe('addDomain', () => {
  it('adds the domain with the time it was added', async () => {
    const { c, ns } = await namespace();
    c.clock.t = T0 + 42;
    const updated = expectOk(await addDomain(c.deps, ns, 'play.example.com'));
    expect(updated.domains).toEqual([{ domain: 'play.example.com', createdAt: T0 + 42 }]);
    expect((await c.catalog.namespaceByDomain('play.example.com'))?.id).toBe(ns.id);
  });

  it('answers CDN_INVALID_DOMAIN with the reason, and adds nothing', async () => {
    const { c, ns } = await namespace();
    expect(expectError(await addDomain(c.deps, ns, `play.${c.settings.cdnDomain}`))).toEqual({ code: 'CDN_INVALID_DOMAIN', params: { reason: 'a Tavern domain' }, path: ['domain'], metadata: { path: ['domain'] } });
    expect((await c.catalog.getNamespace(ns.id))?.domains).toEqual([]);
  });

  it(`answers CDN_TOO_MANY_DOMAINS past ${MAX_DOMAINS} domains`, async () => {
    const { c, ns } = await namespace();
    let current = ns;
    for (let i = 0; i < MAX_DOMAINS; i++) current = expectOk(await addDomain(c.deps, current, `d${i}.example.com`));
    expect(expectError(await addDomain(c.deps, current, 'one-more.example.com'))).toEqual({ code: 'CDN_TOO_MANY_DOMAINS', params: { max: MAX_DOMAINS }, path: ['domain'], metadata: { path: ['domain'] } });
    expect(await c.catalog.namespaceByDomain('one-more.example.com')).toBeUndefined();
  });

  it('answers CLOUD_HOSTNAME_TAKEN for a domain another namespace has', async () => {
    const { c, game, ns } = await namespace();
    const staging = await c.namespace(game.id, ns.versionId, 'staging');
    expectOk(await addDomain(c.deps, ns, 'play.example.com'));
    expect(expectError(await addDomain(c.deps, staging, 'play.example.com')).code).toBe('CLOUD_HOSTNAME_TAKEN');
  });

  it('answers NAMESPACE_NOT_FOUND when the namespace went away', async () => {
    const { c, ns } = await namespace();
    expect(expectError(await addDomain(c.deps, { ...ns, id: '00000000-0000-4000-8000-0000000000ff' }, 'play.example.com')).code).toBe('NAMESPACE_NOT_FOUND');
  });
});

describe('removeDomain', () => {
  it('removes the domain whatever its case, and ignores one the namespace does not have', async () => {
    const { c, ns } = await namespace();
    expectOk(await addDomain(c.deps, ns, 'play.example.com'));
    await removeDomain(c.deps, ns.id, 'other.example.com');
    expect((await c.catalog.getNamespace(ns.id))?.domains).toHaveLength(1);
    await removeDomain(c.deps, ns.id, 'Play.Example.COM');
    expect((await c.catalog.getNamespace(ns.id))?.domains).toEqual([]);
    expect(await c.catalog.namespaceByDomain('play.example.com')).toBeUndefined();
  });
});
