/**
 * `TAVERN_REGISTRY` and its companions, parsed (pure): the registry builds are pushed to, so that
 * every node of a cluster pulls them by digest (`adapters/docker/registry-images.ts`).
 *
 * - `TAVERN_REGISTRY`: `host[:port][/prefix]`, no scheme (`registry.example:5000/games`). The host
 *   must read as a registry to Docker (a dot, a port, or `localhost`): otherwise `name/…` would be
 *   a Docker Hub repository.
 * - `TAVERN_REGISTRY_INSECURE`: `true` allows plain HTTP (a private registry; the engines must list
 *   it as insecure, as they do 127.0.0.0/8 by default); default `false`, HTTPS.
 * - `TAVERN_REGISTRY_USERNAME`, `TAVERN_REGISTRY_PASSWORD`: both or neither.
 */
import type { RegistryTarget } from '../adapters/docker/registry-images.js';

type Env = Readonly<Record<string, string | undefined>>;

const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$`);
/** A path component of a repository name (the distribution spec's grammar). */
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** The longest image name (registry and path) the distribution spec allows. */
const MAX_NAME = 255;
const FORM = 'host[:port][/prefix], e.g. registry.example:5000/games';

/** The host and port part: a name, an IPv4 or a bracketed IPv6 address, with a port from 1 to 65535. */
function address(text: string, raw: string): string {
  const m = HOST.exec(text);
  if (m === null) throw new Error(`TAVERN_REGISTRY must be ${FORM}; its host ${JSON.stringify(text)} is not a host name or address (got ${JSON.stringify(raw)})`);
  const port = m[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) throw new Error(`TAVERN_REGISTRY's port must be 1 to 65535 (got ${JSON.stringify(raw)})`);
  if (port === undefined && !text.includes('.') && !text.startsWith('[') && text !== 'localhost') {
    throw new Error(`TAVERN_REGISTRY's host ${JSON.stringify(text)} needs a dot or a port (or is localhost): Docker would read "${text}/…" as a repository on Docker Hub (got ${JSON.stringify(raw)})`);
  }
  return text;
}

/**
 * The registry, when `TAVERN_REGISTRY` is set (its companions without it are an error).
 *
 * @example
 * parseRegistryEnv({ TAVERN_REGISTRY: '127.0.0.1:5000/games', TAVERN_REGISTRY_INSECURE: 'true' });
 * // { address: '127.0.0.1:5000', prefix: 'games', insecure: true }
 */
export function parseRegistryEnv(env: Env): RegistryTarget | undefined {
  const raw = opt(env['TAVERN_REGISTRY']);
  const companions = ['TAVERN_REGISTRY_INSECURE', 'TAVERN_REGISTRY_USERNAME', 'TAVERN_REGISTRY_PASSWORD'];
  if (raw === undefined) {
    const stray = companions.find((n) => opt(env[n]) !== undefined);
    if (stray !== undefined) throw new Error(`${stray} needs TAVERN_REGISTRY`);
    return undefined;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw new Error(`TAVERN_REGISTRY must be ${FORM}, without a scheme (plain HTTP is TAVERN_REGISTRY_INSECURE=true); got ${JSON.stringify(raw)}`);
  const [host = '', ...path] = raw.replace(/\/+$/, '').split('/');
  const bad = path.find((c) => !COMPONENT.test(c));
  if (bad !== undefined) throw new Error(`TAVERN_REGISTRY's prefix must be lowercase path components of a-z 0-9 separated by . _ __ or -, e.g. games/tavern; ${JSON.stringify(bad)} is not one (got ${JSON.stringify(raw)})`);
  const prefix = path.join('/');
  if (`${host}/${prefix}/tavern-build`.length > MAX_NAME) throw new Error(`TAVERN_REGISTRY is too long: image names are at most ${MAX_NAME} characters (got ${raw.length})`);
  const insecureText = opt(env['TAVERN_REGISTRY_INSECURE']) ?? 'false';
  if (insecureText !== 'true' && insecureText !== 'false') throw new Error('TAVERN_REGISTRY_INSECURE must be "true" (plain HTTP allowed) or "false"');
  const username = opt(env['TAVERN_REGISTRY_USERNAME']);
  const password = env['TAVERN_REGISTRY_PASSWORD'];
  if ((username === undefined) !== (opt(password) === undefined)) throw new Error('TAVERN_REGISTRY_USERNAME and TAVERN_REGISTRY_PASSWORD go together');
  return {
    address: address(host, raw),
    insecure: insecureText === 'true',
    ...(prefix === '' ? {} : { prefix }),
    ...(username === undefined || password === undefined ? {} : { auth: { username, password } }),
  };
}
