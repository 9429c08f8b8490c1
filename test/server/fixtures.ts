/** Version configurations for the server tests. */

/** A config using every section, in the 23.2 client's spellings. */
export const fullConfig = (buildId: string, siteId: string): Record<string, unknown> => ({
  cdn: {
    build_command: 'npm run build',
    build_output: 'dist',
    site_id: siteId,
    routes: [{ glob: 'assets/**', priority: 10, middlewares: [{ kind: { custom_headers: { headers: [{ name: 'Cache-Control', value: 'max-age=60' }] } } }] }],
  },
  engine: { godot: {} },
  kv: {},
  matchmaker: {
    regions: { local: { tier: 'basic-1d1', idle_lobbies: { min: 0, max: 2 } } },
    max_players: 8,
    max_players_direct: 10,
    max_players_party: 4,
    tier: 'basic-1d2',
    docker: {
      image_id: buildId,
      args: ['--serve'],
      env: { MODE: 'prod' },
      network_mode: 'bridge',
      ports: { default: { port: 7777, protocol: 'udp', proxy: 'game_guard' }, web: { port: 8080, protocol: 'https' } },
    },
    game_modes: {
      default: {
        actions: { find: { enabled: true }, join: { enabled: true } },
        listable: true,
        taggable: true,
        allow_dynamic_max_players: true,
      },
      verified: {
        actions: {
          find: { enabled: true, verification: { url: 'https://verify.example.com/check', headers: { 'x-key': 'secret' } } },
          create: { enabled: true, enable_public: true, enable_private: true },
        },
      },
    },
  },
});

/** The spec's own spellings (interface.md): `container`, `captcha_b`, `engine_c`, `game-proxy`, `scripts`, `engine.custom`. */
export const specConfig = (buildId: string): Record<string, unknown> => ({
  engine: { custom: {}, engine_c: { game_module: 'game' } },
  scripts: { start: 'node server.js' },
  kv: {},
  matchmaker: {
    regions: { local: {} },
    captcha: { requests_before_reverify: 5, verification_ttl: 60_000, captcha_b: { site_key: 'site-key-1', secret_key: 'secret-key-1' } },
    container: { image_id: buildId, build_args: { A: '1' }, ports: { default: { port: 7777, protocol: 'tcp', proxy: 'game-proxy' } } },
    game_modes: { default: {} },
  },
});
