import { describe, expect, it } from 'vitest';
import { parseVersion } from '../../../src/core/config/parse-version.js';
import type { ValidationContext } from '../../../src/core/config/types.js';

const ctx: ValidationContext = { regions: new Set(['lnd-atl']), versionDisplayNames: new Set(['taken']) };

const config = {
  matchmaker: {
    regions: { 'lnd-atl': {} },
    docker: { image_id: 'b', ports: { game: { port: 7777, protocol: 'udp' } } },
    game_modes: { default: { max_players: 8 } },
  },
};

const paths = (r: ReturnType<typeof parseVersion>): string[] => (r.ok ? [] : r.error.map((p) => p.path.join('.')));

describe('parseVersion', () => {
  it('parses, validates and resolves a valid body', () => {
    const r = parseVersion({ display_name: 'v1', config }, ctx);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.displayName).toBe('v1');
    expect(r.value.config.matchmaker?.gameModes?.['default']?.maxPlayers).toBe(8);
    expect(r.value.resolved.gameModes[0]?.maxPlayers).toEqual({ normal: 8, direct: 8, party: 8 });
    expect(Object.isFrozen(r.value)).toBe(true);
  });

  it('reports display-name and semantic problems together', () => {
    const bad = { matchmaker: { ...config.matchmaker, game_modes: { default: { max_players: 0, regions: { mars: {} } } } } };
    expect(paths(parseVersion({ display_name: 'taken', config: bad }, ctx)).sort()).toEqual([
      'config.matchmaker.game-modes.*default*.max-players.too-low',
      'config.matchmaker.game-modes.*default*.regions.*mars*.not-found',
      'display-name.not-unique',
    ]);
  });

  it('reports display-name and parse problems together, without semantic noise', () => {
    const wrong = { matchmaker: { ...config.matchmaker, docker: { image_id: 5 } } };
    expect(paths(parseVersion({ display_name: ' x', config: wrong }, ctx))).toEqual(['display-name.invalid', 'config.matchmaker.docker.image-id.invalid-type']);
  });

  it('reports a malformed body', () => {
    expect(paths(parseVersion([], ctx))).toEqual(['invalid-type']);
    expect(paths(parseVersion(null, ctx))).toEqual(['invalid-type']);
    expect(paths(parseVersion({}, ctx))).toEqual(['config.missing', 'display-name.missing']);
    expect(paths(parseVersion({ display_name: 1, config: 'x' }, ctx))).toEqual(['display-name.invalid-type', 'config.invalid-type']);
  });
});
