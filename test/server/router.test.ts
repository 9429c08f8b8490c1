import { describe, expect, it } from 'vitest';
import { canonicalPath, Router } from '../../src/server/router.js';

const G = '6f1d2b8e-0d5f-4f0b-9a57-1f2a3b4c5d6e';

describe('Router', () => {
  const router = new Router<string>()
    .add('GET', '/cloud/games/{game_id:uuid}', 'get-game')
    .add('POST', '/cloud/games/{game_id:uuid}/versions', 'create-version')
    .add('DELETE', '/cloud/games/{game_id:uuid}/namespaces/{ns:uuid}/domains/{domain}', 'remove-domain')
    .add('PUT', '/uploads/{key*}', 'put');

  it('matches literals and typed parameters (UUIDs lowercased)', () => {
    const m = router.match('GET', `/cloud/games/${G.toUpperCase()}`);
    expect(m).toMatchObject({ kind: 'found', handler: 'get-game', params: { game_id: G } });
  });

  it('treats a segment that is not a UUID as no match (404), as Rivet did', () => {
    expect(router.match('GET', '/cloud/games/not-a-uuid').kind).toBe('not-found');
  });

  it('tells a known path with the wrong method (400) from an unknown one (404)', () => {
    expect(router.match('DELETE', `/cloud/games/${G}`).kind).toBe('method-not-allowed');
    expect(router.match('GET', '/cloud/nothing').kind).toBe('not-found');
    expect(router.methods(`/cloud/games/${G}/versions`)).toEqual(['POST']);
  });

  it('decodes parameters and rejects malformed escapes', () => {
    const m = router.match('DELETE', `/cloud/games/${G}/namespaces/${G}/domains/a%2Eexample.com`);
    expect(m).toMatchObject({ kind: 'found', params: { domain: 'a.example.com' } });
    expect(router.match('DELETE', `/cloud/games/${G}/namespaces/${G}/domains/%E0%A4%A`).kind).toBe('not-found');
  });

  it('routes a path without parameters the same every time, per method, and sees a route added later', () => {
    const r = new Router<string>().add('POST', '/matchmaker/lobbies/find', 'find').add('GET', '/{what}', 'any');
    for (let i = 0; i < 3; i++) {
      expect(r.match('POST', '/matchmaker/lobbies/find')).toMatchObject({ kind: 'found', handler: 'find', params: {} });
      expect(r.match('GET', '/matchmaker/lobbies/find').kind).toBe('method-not-allowed');
      expect(r.match('GET', '/health')).toMatchObject({ kind: 'found', handler: 'any', params: { what: 'health' } });
    }
    r.add('GET', '/matchmaker/lobbies/find', 'list');
    expect(r.match('GET', '/matchmaker/lobbies/find')).toMatchObject({ kind: 'found', handler: 'list' });
    expect(r.match('POST', '/matchmaker/lobbies/find')).toMatchObject({ kind: 'found', handler: 'find' });
    r.add('GET', '/health', 'health');
    // Registration order still decides: the earlier parameter route wins.
    expect(r.match('GET', '/health')).toMatchObject({ handler: 'any' });
  });

  it('captures the rest of a path', () => {
    expect(router.match('PUT', '/uploads/a/b/c.txt')).toMatchObject({ kind: 'found', params: { key: 'a/b/c.txt' } });
    expect(router.match('PUT', '/uploads').kind).toBe('not-found');
  });

  it('accepts one trailing slash, but routes an empty segment nowhere (the path is never rewritten)', () => {
    expect(router.match('GET', `/cloud/games/${G}/`).kind).toBe('found');
    for (const path of [`//cloud/games/${G}`, `/cloud//games/${G}`, `/cloud/games/${G}//`]) expect(router.match('GET', path).kind, path).toBe('not-found');
    for (const path of ['//uploads/a', '/uploads//a', '/uploads/a//b']) expect(router.match('PUT', path).kind, path).toBe('not-found');
    expect(router.methods(`//cloud/games/${G}`)).toEqual([]);
  });

  it('routes a path as sent: a dot segment (raw or escaped), an escaped separator or an escaped literal matches nothing', () => {
    for (const path of [`/cloud/games/../games/${G}`, `/cloud/./games/${G}`, `/cloud/games/${G}/.`, `/cloud/%2e%2e/cloud/games/${G}`,
      `/cloud/%2E./games/${G}`, `/cloud/.%2e/games/${G}`, `/cloud/%2e/games/${G}`, `/%63loud/games/${G}`, `/cloud%2fgames/${G}`,
      `/cloud%2Fgames/${G}`, `/cloud\\games/${G}`, `/cloud%5cgames/${G}`, `/cloud%5Cgames/${G}`]) {
      expect(router.match('GET', path).kind, path).toBe('not-found');
      expect(router.methods(path), path).toEqual([]);
    }
    // A parameter is decoded, but never into a separator or a dot segment.
    for (const domain of ['a%2fb', 'a%2Fb', 'a%5cb', 'a\\b', '..', '%2e%2e', '.', '%2e']) {
      expect(router.match('DELETE', `/cloud/games/${G}/namespaces/${G}/domains/${domain}`).kind, domain).toBe('not-found');
    }
    for (const key of ['a/../b', '../a', 'a/./b', 'a/%2e%2e/b', 'a%2fb', 'a/b%5cc', 'a/%zz']) {
      expect(router.match('PUT', `/uploads/${key}`).kind, key).toBe('not-found');
    }
    expect(router.match('PUT', '/uploads/a/b%20c/.d..e')).toMatchObject({ kind: 'found', params: { key: 'a/b%20c/.d..e' } });
  });
});

describe('canonicalPath (both URL styles of wire.md §1.1)', () => {
  it('maps the deprecated host-per-service form', () => {
    expect(canonicalPath('/v1/lobbies/find', () => 'matchmaker.api.example.com')).toBe('/matchmaker/lobbies/find');
    expect(canonicalPath('/v1/games/x', () => 'cloud.api.rivet.gg:443')).toBe('/cloud/games/x');
    expect(canonicalPath('/v1', () => 'MATCHMAKER.API.example.com')).toBe('/matchmaker');
  });

  it('maps a dot segment with the rest, where the router then finds nothing', () => {
    expect(canonicalPath('/v1/../cloud/games', () => 'matchmaker.api.example.com')).toBe('/matchmaker/../cloud/games');
  });

  it('leaves the single-origin form and other hosts alone', () => {
    expect(canonicalPath('/matchmaker/lobbies/find', () => 'api.example.com')).toBe('/matchmaker/lobbies/find');
    expect(canonicalPath('/v1/lobbies/find', () => '127.0.0.1:8080')).toBe('/v1/lobbies/find');
    expect(canonicalPath('/lobbies/find', () => 'matchmaker.api.example.com')).toBe('/lobbies/find');
    expect(canonicalPath('/v1/x', () => 'unknown.api.example.com')).toBe('/v1/x');
    expect(canonicalPath('/cloud/bootstrap', () => null)).toBe('/cloud/bootstrap');
  });
});
