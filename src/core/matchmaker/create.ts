import { type Admission, type Credentials, actionGate, passGates, refusedAfterGates, rejected } from '../admission/gate.js';
import type { Ctx } from '../context.js';
import { matchError } from '../errors.js';
import type { Publicity } from '../lobby/lobby.js';
import { startRefusal } from '../hosting.js';
import { createRng } from '../rng.js';
import { Tx } from '../tx.js';
import type { World } from '../world.js';
import { currentVersion, namespaceOf } from '../world.js';
import { checkDynamicMax, checkTags, type Client, closestRegion, resolveModes } from './request.js';
import { reserveSeats, type Seat } from './seat.js';
import { spawnLobby } from './spawn.js';
import { optional } from '../optional.js';

export interface CreateCommand extends Credentials {
  readonly namespaceId: string;
  readonly gameMode: string;
  readonly region?: string;
  readonly publicity?: Publicity;
  readonly tags?: Readonly<Record<string, string>>;
  readonly maxPlayers?: number;
  readonly lobbyConfig?: unknown;
  readonly playerId: string;
  readonly newLobbyId: string;
  readonly client: Client;
}

/** `lobby_config` is capped at 16 KiB of JSON. */
export const MAX_LOBBY_CONFIG_BYTES = 16 * 1024;

const utf8Length = (s: string): number => {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
};

/**
 * `POST /matchmaker/lobbies/create`: a custom lobby in the caller's mode and region, with the
 * caller seated in it. Publicity defaults to public when `enable_public`, else private, and must be
 * enabled. Unlike Rivet 23.2, the new lobby keeps the request's tags, and a failure (lobby cap,
 * region, ports) answers at once instead of leaving the request hanging. A lobby that cannot start
 * (`ctx.hosting`) is refused as `find` refuses it, committing nothing.
 *
 * @example
 * create(world, { namespaceId, gameMode: 'custom', playerId, newLobbyId, client }, { now, seed })
 */
export const create = (world: World, cmd: CreateCommand, ctx: Ctx): Admission<Seat> => {
  const ns = namespaceOf(world, cmd.namespaceId);
  const version = currentVersion(ns);
  const modes = resolveModes(version, [cmd.gameMode]);
  if (!modes.ok) return rejected({ ...modes.error, path: ['game_mode'] });
  const mode = modes.value[0];
  if (version === undefined || mode === undefined) throw new Error('unreachable: mode resolved without a version');
  const action = mode.actions.create;
  const publicity: Publicity = cmd.publicity ?? (action.enablePublic ? 'public' : 'private');
  const problem =
    actionGate(mode, 'create', ['game_mode']) ??
    ((publicity === 'public' ? action.enablePublic : action.enablePrivate)
      ? undefined
      : matchError('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', { reason: `publicity ${publicity} is not enabled` }, { path: ['publicity'] })) ??
    (cmd.lobbyConfig !== undefined && utf8Length(JSON.stringify(cmd.lobbyConfig)) > MAX_LOBBY_CONFIG_BYTES
      ? matchError('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', { reason: 'lobby_config is larger than 16 KiB' }, { path: ['lobby_config'] })
      : undefined) ??
    checkTags(cmd.tags ?? {}, [mode]) ??
    checkDynamicMax(cmd.maxPlayers, [mode]);
  if (problem) return rejected(problem);
  const region = cmd.region ?? closestRegion(world.regions, new Set(mode.regions.map((r) => r.name)), cmd.client.coords);
  if (region === undefined || !world.regions.some((r) => r.id === region)) {
    return rejected(matchError('MATCHMAKER_REGION_NOT_FOUND', { region: region ?? '' }, { path: ['region'] }));
  }
  if (!mode.regions.some((r) => r.name === region)) {
    return rejected(matchError('MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE', { region, game_mode: mode.name }, { path: ['region'] }));
  }
  const tx = new Tx(world, ns, ctx.now);
  const tags = cmd.tags ?? {};
  const stop = passGates(tx, {
    version,
    current: version,
    client: cmd.client,
    seats: 1,
    credentials: cmd,
    verify: [{
      mode,
      payload: {
        namespaceId: ns.id,
        kind: 'Create',
        client: cmd.client,
        verificationData: cmd.verificationData,
        lobbyConfig: cmd.lobbyConfig,
        tags,
        ...optional('dynamicMaxPlayers', cmd.maxPlayers),
        party: false,
      },
    }],
    action: 'create',
  });
  if (stop) return stop;
  const spawned = spawnLobby(
    tx,
    {
      lobbyId: cmd.newLobbyId,
      version,
      mode,
      region,
      origin: 'custom',
      publicity,
      tags,
      ...optional('dynamicMaxPlayers', cmd.maxPlayers),
      ...optional('lobbyConfig', cmd.lobbyConfig),
    },
    createRng(ctx.seed),
  );
  if (!spawned.ok) return refusedAfterGates(tx, spawned.error);
  // The new lobby cannot start (no runtime there, or its mode is under start back-off): nothing is committed.
  const held = startRefusal(ctx.hosting, spawned.value, ctx.now);
  if (held !== undefined) return rejected(held);
  return { kind: 'admitted', decision: tx.commit(reserveSeats(tx, spawned.value, [cmd.playerId], cmd.client, true)) };
};
