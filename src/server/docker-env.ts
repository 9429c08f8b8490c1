/**
 * The Docker runtime's operator settings, parsed (pure): the sandbox of every lobby container
 * (`TAVERN_DOCKER_PIDS_LIMIT`, `TAVERN_DOCKER_TMP_MB`, `TAVERN_DOCKER_READ_ONLY_ROOT`,
 * `TAVERN_DOCKER_USER`), whether host networking is allowed (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`)
 * and the network bridge lobbies join (`TAVERN_DOCKER_NETWORK`).
 */
import type { Hardening } from '../adapters/docker/lobby-spec.js';

export interface DockerEnv {
  /** The sandbox of every lobby container. */
  readonly hardening: Hardening;
  /**
   * `TAVERN_DOCKER_ALLOW_HOST_NETWORK` (default false): whether a version may ask for host
   * networking. Off, publishing refuses it and the Docker runtime never starts such a container.
   */
  readonly allowHostNetwork: boolean;
  /**
   * `TAVERN_DOCKER_NETWORK`: an existing bridge network lobbies join instead of Tavern's own
   * (`tavern-lobbies`, created with inter-container communication off when missing).
   */
  readonly dockerNetwork?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

const flag = (env: Env, name: string, fallback: boolean): boolean => {
  const raw = opt(env[name]);
  if (raw === undefined) return fallback;
  if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be "true" or "false"`);
  return raw === 'true';
};

const whole = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const v = Number(opt(env[name]) ?? fallback);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return v;
};

/** A uid or gid (the engine's range: 0..2^32-2) or a user or group name (POSIX portable, as useradd takes it). */
const ID_PART = /^(?:\d{1,10}|[a-z_][a-z0-9_-]{0,31})$/;
const isIdPart = (s: string): boolean => ID_PART.test(s) && (!/^\d/.test(s) || Number(s) <= 4_294_967_294);

/**
 * `TAVERN_DOCKER_USER`: `uid[:gid]` (numbers) or a user name (optionally `:group`), never root.
 *
 * @example
 * dockerUser('65534:65534'); // '65534:65534'
 * dockerUser(undefined); // undefined: the image's own user
 */
export function dockerUser(raw: string | undefined): string | undefined {
  const user = opt(raw);
  if (user === undefined) return undefined;
  const [name = '', group, ...rest] = user.split(':');
  if (rest.length > 0 || !isIdPart(name) || (group !== undefined && !isIdPart(group))) {
    throw new Error(`TAVERN_DOCKER_USER must be uid[:gid] (numbers, e.g. 65534:65534) or a user name of the image (e.g. nobody); got ${JSON.stringify(user)}`);
  }
  if (name === 'root' || (/^\d+$/.test(name) && Number(name) === 0)) throw new Error('TAVERN_DOCKER_USER must not be root (uid 0): it forces a non-root user');
  return user;
}

/** Docker's network names; `host` and `none` are not bridges (host would share the host's network). */
const NETWORK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * @example
 * parseDockerEnv({ TAVERN_DOCKER_USER: '65534' }).hardening.user; // '65534'
 */
export function parseDockerEnv(env: Env): DockerEnv {
  const user = dockerUser(env['TAVERN_DOCKER_USER']);
  const hardening: Hardening = {
    pidsLimit: whole(env, 'TAVERN_DOCKER_PIDS_LIMIT', 256, 16, 65_536),
    tmpMiB: whole(env, 'TAVERN_DOCKER_TMP_MB', 64, 1, 65_536),
    readOnlyRoot: flag(env, 'TAVERN_DOCKER_READ_ONLY_ROOT', true),
    ...(user === undefined ? {} : { user }),
  };
  const network = opt(env['TAVERN_DOCKER_NETWORK']);
  if (network !== undefined && (!NETWORK_NAME.test(network) || network === 'host' || network === 'none')) {
    throw new Error(`TAVERN_DOCKER_NETWORK must name an existing bridge network (not host or none); got ${JSON.stringify(network)}`);
  }
  return { hardening, allowHostNetwork: flag(env, 'TAVERN_DOCKER_ALLOW_HOST_NETWORK', false), ...(network === undefined ? {} : { dockerNetwork: network }) };
}
