/**
 * wire.md §5.4 (Container environment, lobby), quoted verbatim from the shared reference, and the
 * reserved names read out of it, so the validation is checked against the spec's text rather than
 * against a copy of `RESERVED_ENV_NAMES`.
 */
export const WIRE_5_4 = [
  '`RIVET_API_ENDPOINT` (API origin), `RIVET_TOKEN` (lobby token), `RIVET_LOBBY_ID`, `RIVET_NAMESPACE_ID`,',
  '`RIVET_NAMESPACE_NAME`, `RIVET_VERSION_ID`, `RIVET_VERSION_NAME`, `RIVET_GAME_MODE_ID`, `RIVET_GAME_MODE_NAME`,',
  '`RIVET_REGION_ID`, `RIVET_REGION_NAME`, `RIVET_MAX_PLAYERS_NORMAL|DIRECT|PARTY`, `RIVET_CPU` (millicores),',
  '`RIVET_MEMORY`, `RIVET_MEMORY_OVERSUBSCRIBE` (bytes), `RIVET_LOBBY_CONFIG` (create only), `RIVET_LOBBY_TAGS`',
  '(JSON, when tags), deprecated `RIVET_LOBBY_TOKEN`, `RIVET_LOBBY_GROUP_ID`, `RIVET_LOBBY_GROUP_NAME` and (with',
  'deprecated subdomains) `RIVET_*_API_URL`; per port `PORT_<label with - → _>` (container port in bridge mode,',
  'host port in host mode); per range `PORT_RANGE_MIN_<label>` / `PORT_RANGE_MAX_<label>`. Developer env values are',
  'Go-template-escaped. Restart policy: none (a crashed lobby stops).',
].join('\n');

/**
 * Every fixed `RIVET_*` name §5.4 lists (`A_B|C|D` spelled out as `A_B`, `A_C`, `A_D`); the
 * wildcard `RIVET_*_API_URL` and the per-port names are left to their own tests.
 */
export const wireReservedEnvNames = (): string[] =>
  [...WIRE_5_4.matchAll(/`(RIVET_[A-Z_]+(?:\|[A-Z_]+)*)`/g)].flatMap(([, written = '']) => {
    const [first = '', ...alternatives] = written.split('|');
    const stem = first.slice(0, first.lastIndexOf('_') + 1);
    return [first, ...alternatives.map((a) => stem + a)];
  });
