/**
 * The problems of a member that an object does not take: `unknown-key` (with the closest known
 * key, when one is near) and `forbidden-key` (with the reason). The key is named as written, in
 * asterisks like any user-chosen name: `['config', 'matchmaker', '*max_player*', 'unknown-key']`.
 */
import type { Problem } from './types.js';
import { nearestKey } from './nearest-key.js';
import { explained, named, type Path } from './path.js';

/**
 * The problem of `key`, which the object at `path` does not know; `known` are the keys it does.
 *
 * @example
 * unknownKey(['config', 'matchmaker'], 'max_player', ['max_players', 'tier']);
 * // { path: ['config', 'matchmaker', '*max_player*', 'unknown-key'], message: 'unknown key `max_player`: did you mean `max_players`?' }
 */
export function unknownKey(path: Path, key: string, known: Iterable<string>): Problem {
  const near = nearestKey(key, known);
  const message = near === undefined ? `unknown key \`${key}\`` : `unknown key \`${key}\`: did you mean \`${near}\`?`;
  return explained([...path, named(key)], message, 'unknown-key');
}

/**
 * The problem of `key`, which is never allowed at `path`, and why.
 *
 * @example
 * forbiddenKey(['config', 'matchmaker', 'docker'], 'privileged', 'lobbies run unprivileged');
 * // { path: [..., 'docker', '*privileged*', 'forbidden-key'], message: '`privileged` is never allowed: lobbies run unprivileged' }
 */
export function forbiddenKey(path: Path, key: string, reason: string): Problem {
  return explained([...path, named(key)], `\`${key}\` is never allowed: ${reason}`, 'forbidden-key');
}
