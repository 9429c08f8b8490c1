/**
 * Host networking at publish, through the API: with `TAVERN_DOCKER_ALLOW_HOST_NETWORK` off (the
 * server's default) a version asking for it is 400 `VALIDATION_ERROR` at
 * `config.matchmaker[.game-modes.*mode*].network-mode.host-not-allowed`, saying why and how an
 * operator allows it, and the validate endpoint reports the same; on, it is accepted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HOST_NETWORK_REFUSED } from '../../src/core/config/host-network.js';
import { harness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const hostConfig = (imageId: string): unknown => ({
  matchmaker: {
    regions: { local: {} },
    docker: { image_id: imageId, network_mode: 'host', ports: { p2p: { port_range: { min: 27100, max: 27199 }, protocol: 'udp', proxy: 'none' } } },
    game_modes: { default: {}, duel: { docker: { image_id: imageId, network_mode: 'host', ports: { game: { port: 7777, protocol: 'udp' } } } } },
  },
});

const PATHS = [
  ['config', 'matchmaker', 'network-mode', 'host-not-allowed'],
  ['config', 'matchmaker', 'game-modes', '*duel*', 'network-mode', 'host-not-allowed'],
];

describe('host networking at publish', () => {
  it('off: publishing and validating a host-network version are refused at its fields, with the reason and the setting', async () => {
    h = harness({ config: { hostNetworkAllowed: false } });
    const s = await h.setup();
    const body = { display_name: 'host', config: hostConfig(s.buildId) };
    const published = await h.call('POST', `/cloud/games/${s.gameId}/versions`, { token: s.cloud, body });
    expect(published.status).toBe(400);
    expect(published.body['code']).toBe('VALIDATION_ERROR');
    expect(published.body['metadata']).toEqual({ errors: PATHS.map((path) => ({ path, message: HOST_NETWORK_REFUSED })) });
    expect(published.body['message']).toContain(`config.matchmaker.network-mode.host-not-allowed (${HOST_NETWORK_REFUSED})`);
    const validated = await h.call('POST', `/cloud/games/${s.gameId}/versions/validate`, { token: s.cloud, body });
    expect(validated.status).toBe(200);
    expect(validated.body['errors']).toEqual(PATHS.map((path) => ({ path, message: HOST_NETWORK_REFUSED })));
  });

  it('on: the same version is accepted', async () => {
    h = harness({ config: { hostNetworkAllowed: true } });
    const s = await h.setup();
    const body = { display_name: 'host', config: hostConfig(s.buildId) };
    expect((await h.call('POST', `/cloud/games/${s.gameId}/versions/validate`, { token: s.cloud, body })).body['errors']).toEqual([]);
    expect((await h.call('POST', `/cloud/games/${s.gameId}/versions`, { token: s.cloud, body })).status).toBe(200);
  });
});
