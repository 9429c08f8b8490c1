/**
 * The runtime hook that gives each lobby container what only the server knows (wire.md §5.4): its
 * lobby token (`RIVET_TOKEN`, deprecated `RIVET_LOBBY_TOKEN`), the API origin, and the namespace
 * and version names. Wrap the real runtime with it before handing it to the matchmaker.
 */
import type { StartLobby } from '../core/effects.js';
import type { NamespaceStore, VersionStore } from '../io/catalog.js';
import type { Runtime } from '../io/index.js';
import type { TokenIssuer } from './tokens.js';

export interface LobbyEnvDeps {
  readonly tokens: TokenIssuer;
  readonly catalog: NamespaceStore & VersionStore;
  /** `RIVET_API_ENDPOINT`, e.g. `http://127.0.0.1:8080`. */
  readonly publicOrigin: string;
}

/**
 * The lobby's server-side environment.
 *
 * @effects catalog (token record, namespace and version names)
 */
export async function lobbyEnv(lobby: StartLobby, deps: LobbyEnvDeps): Promise<Record<string, string>> {
  const origin = deps.publicOrigin.replace(/\/+$/, '');
  const ns = await deps.catalog.getNamespace(lobby.namespaceId);
  const version = await deps.catalog.getVersion(lobby.versionId);
  const token = await deps.tokens.issue({ kind: 'lobby', namespaceId: lobby.namespaceId, lobbyId: lobby.lobbyId });
  return {
    RIVET_API_ENDPOINT: origin,
    RIVET_TOKEN: token,
    RIVET_LOBBY_TOKEN: token,
    RIVET_NAMESPACE_NAME: ns?.nameId ?? '',
    RIVET_VERSION_NAME: version?.displayName ?? '',
    // The deprecated per-service URLs old game code builds paths on (wire.md §1.1).
    RIVET_MATCHMAKER_API_URL: `${origin}/matchmaker`,
    RIVET_CLOUD_API_URL: `${origin}/cloud`,
  };
}

/**
 * @example
 * const matchmaker = new Matchmaker({ ..., runtime: withLobbyEnv(dockerRuntime, { tokens, catalog, publicOrigin }) });
 */
export function withLobbyEnv(runtime: Runtime, deps: LobbyEnvDeps): Runtime {
  return {
    async start(lobby) {
      const env = { ...lobby.env, ...(await lobbyEnv(lobby, deps)) };
      return runtime.start({ ...lobby, env });
    },
    stop: (stop) => runtime.stop(stop),
  };
}
