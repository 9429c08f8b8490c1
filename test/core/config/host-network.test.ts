/**
 * Host networking is an operator's opt-in, checked at publish (`network-mode.host-not-allowed`, with
 * the reason and the setting in its message): the core's rule, given the operator's setting as a
 * fact of the validation context.
 */
import { describe, expect, it } from 'vitest';
import { HOST_NETWORK_REFUSED } from '../../../src/core/config/host-network.js';
import { parseVersion } from '../../../src/core/config/parse-version.js';
import type { ValidationContext } from '../../../src/core/config/types.js';
import { validationError, errorMessage } from '../../../src/core/errors.js';

const HOST = { image_id: 'b', network_mode: 'host', ports: { p2p: { port_range: { min: 27100, max: 27199 }, protocol: 'udp', proxy: 'none' } } };
const BRIDGE = { image_id: 'b', ports: { game: { port: 7777, protocol: 'udp' } } };

const config = (mm: object, modes: object = { default: {} }): object => ({ matchmaker: { regions: { local: {} }, ...mm, game_modes: modes } });
const problems = (cfg: object, ctx: Partial<ValidationContext>): readonly { path: string; message?: string }[] => {
  const r = parseVersion({ display_name: 'v', config: cfg }, { regions: new Set(['local']), ...ctx });
  return r.ok ? [] : r.error.map((p) => ({ path: p.path.join('.'), ...(p.message === undefined ? {} : { message: p.message }) }));
};

describe('host networking, an operator opt-in', () => {
  it('is refused where it is written, at matchmaker and game-mode level, with the reason and the setting that allows it', () => {
    const cfg = config({ docker: HOST }, { default: {}, duel: { docker: HOST }, bridged: { docker: BRIDGE } });
    expect(problems(cfg, { hostNetworkAllowed: false })).toEqual([
      { path: 'config.matchmaker.network-mode.host-not-allowed', message: HOST_NETWORK_REFUSED },
      { path: 'config.matchmaker.game-modes.*duel*.network-mode.host-not-allowed', message: HOST_NETWORK_REFUSED },
    ]);
    expect(HOST_NETWORK_REFUSED).toMatch(/Tavern's API, its database and the Docker engine listening on loopback/);
    expect(HOST_NETWORK_REFUSED).toContain('TAVERN_DOCKER_ALLOW_HOST_NETWORK=true');
  });

  it('is accepted when the operator allows it, and not checked when the context does not say', () => {
    const cfg = config({ docker: HOST });
    expect(problems(cfg, { hostNetworkAllowed: true })).toEqual([]);
    expect(problems(cfg, {})).toEqual([]);
  });

  it('never refuses a bridge container, whatever the setting', () => {
    expect(problems(config({ docker: BRIDGE }), { hostNetworkAllowed: false })).toEqual([]);
    expect(problems(config({ docker: { ...BRIDGE, network_mode: 'bridge' } }), { hostNetworkAllowed: false })).toEqual([]);
  });

  it('is refused in the deprecated lobby_groups form too, at the group converted into a game mode', () => {
    const cfg = {
      matchmaker: {
        lobby_groups: [{
          name_id: 'legacy', regions: [{ region_id: 'local' }],
          runtime: { docker: { build_id: 'b', network_mode: 'host', ports: [{ label: 'p2p', port_range: { min: 27100, max: 27199 }, proxy_protocol: 'udp', proxy_kind: 'none' }] } },
        }],
      },
    };
    expect(problems(cfg, { hostNetworkAllowed: false }).map((p) => p.path)).toEqual(['config.matchmaker.game-modes.*legacy*.network-mode.host-not-allowed']);
    expect(problems(cfg, { hostNetworkAllowed: true })).toEqual([]);
  });

  it("shows its words in VALIDATION_ERROR's message and metadata", () => {
    const r = parseVersion({ display_name: 'v', config: config({ docker: HOST }) }, { regions: new Set(['local']), hostNetworkAllowed: false });
    if (r.ok) throw new Error('accepted');
    const e = validationError(r.error);
    expect(errorMessage(e)).toContain(`config.matchmaker.network-mode.host-not-allowed (${HOST_NETWORK_REFUSED})`);
    expect(e.metadata).toEqual({ errors: [{ path: ['config', 'matchmaker', 'network-mode', 'host-not-allowed'], message: HOST_NETWORK_REFUSED }] });
  });
});
