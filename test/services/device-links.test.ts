import { describe, expect, it } from 'vitest';
import { matchError } from '../../src/core/errors.js';
import { completeDeviceLink, deviceLinkStatus, linkedCloudToken, prepareDeviceLink, type CloudTokens } from '../../src/services/device-links.js';
import { cloud, expectError, expectOk } from './cloud.js';

const GAME = '00000000-0000-4000-8000-00000000000a';
const OTHER = '00000000-0000-4000-8000-00000000000b';
const UNKNOWN = matchError('API_BAD_QUERY', { name: 'device_link_token', reason: 'unknown device link' });

/** Cloud tokens `cloud-1`, `cloud-2`, … with the grants they were issued for. */
const recordingTokens = (): CloudTokens & { readonly grants: unknown[] } => {
  const grants: unknown[] = [];
  return { grants, issue: (grant) => (grants.push(grant), Promise.resolve(`cloud-${grants.length}`)) };
};

const setup = () => {
  const c = cloud();
  const tokens = recordingTokens();
  return { c, tokens, deps: { ...c.deps, tokens } };
};

describe('prepareDeviceLink', () => {
  it('stores a pending link under a token made from the secret, with a fresh id', async () => {
    const { deps, c } = setup();
    const link = await prepareDeviceLink(deps, 'secret-1');
    expect(link).toEqual({ id: c.random.issued[0], token: 'device_link.secret-1' });
    expect(expectOk(await deviceLinkStatus(deps, link.token))).toBeUndefined();
  });
});

describe('deviceLinkStatus', () => {
  it('answers API_BAD_QUERY for a token no link has', async () => {
    const { deps } = setup();
    await prepareDeviceLink(deps, 'secret-1');
    expect(expectError(await deviceLinkStatus(deps, 'device_link.secret-2'))).toEqual(UNKNOWN);
  });
});

describe('completeDeviceLink', () => {
  it('issues a cloud token for the game, which the link then answers with', async () => {
    const { deps, tokens } = setup();
    const { token } = await prepareDeviceLink(deps, 'secret-1');
    expect(await linkedCloudToken(deps, token)).toBeUndefined();
    expectOk(await completeDeviceLink(deps, token, GAME));
    expect(tokens.grants).toEqual([{ kind: 'cloud', gameId: GAME }]);
    expect(expectOk(await deviceLinkStatus(deps, token))).toBe('cloud-1');
    expect(await linkedCloudToken(deps, token)).toBe('cloud-1');
  });

  it('completed again for the same game: keeps the first token, issuing none', async () => {
    const { deps, tokens } = setup();
    const { token } = await prepareDeviceLink(deps, 'secret-1');
    expectOk(await completeDeviceLink(deps, token, GAME));
    expectOk(await completeDeviceLink(deps, token, GAME));
    expect(tokens.grants).toHaveLength(1);
    expect(await linkedCloudToken(deps, token)).toBe('cloud-1');
  });

  it('completed again for another game: DEVICE_LINK_ALREADY_COMPLETED, the first token kept, none issued (outside probe)', async () => {
    const { deps, tokens } = setup();
    const { token } = await prepareDeviceLink(deps, 'secret-1');
    expectOk(await completeDeviceLink(deps, token, GAME));
    expect(expectError(await completeDeviceLink(deps, token, OTHER))).toEqual(matchError('DEVICE_LINK_ALREADY_COMPLETED'));
    expect(tokens.grants).toEqual([{ kind: 'cloud', gameId: GAME }]);
    expect(await linkedCloudToken(deps, token)).toBe('cloud-1');
  });

  it('two completions racing for two games: one wins, the other is refused, the link holds the winner\'s token', async () => {
    const { deps, tokens } = setup();
    const { token } = await prepareDeviceLink(deps, 'secret-1');
    const [a, b] = await Promise.all([completeDeviceLink(deps, token, GAME), completeDeviceLink(deps, token, OTHER)]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    const winner = a.ok ? GAME : OTHER;
    expect(tokens.grants).toEqual([{ kind: 'cloud', gameId: winner }]);
    expect(await linkedCloudToken(deps, token)).toBe('cloud-1');
  });

  it('answers API_BAD_QUERY for a token no link has, issuing nothing', async () => {
    const { deps, tokens } = setup();
    expect(expectError(await completeDeviceLink(deps, 'device_link.nope', GAME))).toEqual(UNKNOWN);
    expect(tokens.grants).toEqual([]);
    expect(await linkedCloudToken(deps, 'device_link.nope')).toBeUndefined();
  });
});
