/**
 * The Docker network bridge lobbies join: Tavern's own (`tavern-lobbies`, a user-defined bridge
 * created when missing with inter-container communication off, so one tenant's lobby cannot reach
 * another's container directly), or an existing bridge network the operator chose
 * (`TAVERN_DOCKER_NETWORK`). Its gateway is the host's address on it, where Tavern's lobby API
 * listener answers.
 */
import type Dockerode from 'dockerode';
import { gatewayOf, type NetworkInfo } from './engine.js';
import { describeEngineError } from './engine-errors.js';

/** The name of Tavern's own lobby network. */
export const LOBBY_NETWORK = 'tavern-lobbies';
/** The bridge driver's option that turns inter-container communication (ICC) on or off. */
export const ICC_OPTION = 'com.docker.network.bridge.enable_icc';

/** Which network lobbies join, and whether Tavern may create it when it is missing (only its own). */
export interface LobbyNetworkChoice {
  readonly name: string;
  readonly create: boolean;
}

/** The network lobbies join, as the engine has it. */
export interface LobbyNetwork {
  readonly name: string;
  /** The engine's id of it: what containers are put on (a name two networks share would be ambiguous). */
  readonly id: string;
  /** The host's IPv4 address on it: what a lobby reaches the host at. */
  readonly gateway: string;
  /** Its IPv4 subnet (CIDR): the addresses lobbies connect from. */
  readonly subnet?: string;
  /** Whether containers on it reach each other directly (ICC on: the operator's chosen network allows it). */
  readonly interContainer: boolean;
  /** Whether this call created it. */
  readonly created: boolean;
}

/** Tavern's own network, made when missing. */
export const DEFAULT_LOBBY_NETWORK: LobbyNetworkChoice = Object.freeze({ name: LOBBY_NETWORK, create: true });

interface Listed {
  readonly Id: string;
  readonly Name: string;
  readonly Created?: string;
}

/**
 * The networks named exactly `name`, oldest first. The engine may hold two of one name: two Tavern
 * instances that created it at the same moment (its duplicate check is not atomic).
 */
const named = async (docker: Dockerode, name: string): Promise<Listed[]> => {
  const listed = (await docker.listNetworks({ filters: { name: [name] } })) as Listed[];
  const at = (n: Listed): number => Date.parse(n.Created ?? '') || 0;
  return listed.filter((n) => n.Name === name).sort((a, b) => at(a) - at(b) || (a.Id < b.Id ? -1 : 1));
};

/** The bridge driver's option naming the host's interface of the network. */
const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';
/** A name Linux takes for an interface (at most 15 characters). */
const INTERFACE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;

/**
 * Creates Tavern's network and returns the one to use: the oldest of that name. Its host interface
 * has the network's name when Linux takes it (`tavern-lobbies`: firewall rules can name it). A
 * network of the same name made at the same moment by another Tavern is no failure (the engine
 * refuses the name or the interface, or takes both: then the later one is removed again by the
 * instance that made it, best effort; lobbies on either are isolated alike).
 */
const create = async (docker: Dockerode, name: string): Promise<{ id: string; created: boolean }> => {
  let mine: string | undefined;
  let refused: unknown;
  try {
    const options = { [ICC_OPTION]: 'false', ...(INTERFACE_NAME.test(name) ? { [BRIDGE_NAME_OPTION]: name } : {}) };
    mine = ((await docker.createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Options: options, Labels: { 'tavern.network': 'lobbies' } })) as { id: string }).id;
  } catch (error) {
    refused = error;
  }
  const oldest = (await named(docker, name))[0];
  if (oldest === undefined) throw new Error(`the Docker network ${name} could not be created${refused === undefined ? '' : `: ${describeEngineError(refused)}`}`, { cause: refused });
  if (mine !== undefined && mine !== oldest.Id) await docker.getNetwork(mine).remove().catch(() => undefined);
  return { id: oldest.Id, created: mine === oldest.Id };
};

/**
 * The network lobbies join, created first when it is Tavern's own and missing. Throws, saying what
 * to do, when the operator's network does not exist, is not a bridge, or has no IPv4 gateway.
 *
 * @example
 * const net = await ensureLobbyNetwork(docker, DEFAULT_LOBBY_NETWORK); // { name: 'tavern-lobbies', id: '3f…', gateway: '172.18.0.1', interContainer: false, created: true }
 */
export async function ensureLobbyNetwork(docker: Dockerode, choice: LobbyNetworkChoice): Promise<LobbyNetwork> {
  let found = (await named(docker, choice.name))[0];
  let created = false;
  if (found === undefined) {
    if (!choice.create) {
      throw new Error(`the Docker network ${choice.name} (TAVERN_DOCKER_NETWORK) does not exist: create it, e.g. docker network create -o ${ICC_OPTION}=false ${choice.name}, or unset TAVERN_DOCKER_NETWORK to let Tavern make its own`);
    }
    const made = await create(docker, choice.name);
    found = { Id: made.id, Name: choice.name };
    created = made.created;
  }
  const info = (await docker.getNetwork(found.Id).inspect()) as NetworkInfo;
  if (info.Driver !== 'bridge') throw new Error(`the Docker network ${choice.name} is a ${info.Driver ?? 'driverless'} network: lobbies need a bridge network`);
  const gateway = gatewayOf(info);
  if (gateway === undefined) throw new Error(`the Docker network ${choice.name} has no IPv4 gateway: lobbies could not reach Tavern's API`);
  const subnet = (info.IPAM?.Config ?? []).find((c) => c.Subnet !== undefined && !c.Subnet.includes(':'))?.Subnet;
  return { name: choice.name, id: found.Id, gateway, ...(subnet === undefined ? {} : { subnet }), interContainer: info.Options?.[ICC_OPTION] !== 'false', created };
}
