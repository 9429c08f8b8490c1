/**
 * `tavern deploy`'s check before anything is built or uploaded: the config, as it will be sent,
 * validated by the server (its regions, tiers, protocols, the version name) through
 * `POST …/versions/validate`. The builds and the site the deploy is about to make do not exist
 * yet: they stand in as a placeholder id, and only "that id is unknown" is excused for them.
 */
import type { Api, Json } from './api.js';
import type { DockerBlock } from './version-config.js';

/** The id that stands in for a build or site the deploy has not made yet. */
export const PLACEHOLDER_ID = '00000000-0000-0000-0000-000000000000';

interface WireProblem {
  readonly path: readonly string[];
  readonly message?: string;
}

/** A config the server refused before anything was built: each problem as `path: words`. */
export class ConfigRefused extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly WireProblem[]) {
    const lines = problems.map((p) => (p.message === undefined ? p.path.join('.') : `${p.path.join('.')}: ${p.message}`));
    super(`the server refuses this config, so nothing was built:\n${lines.map((l) => `  - ${l}`).join('\n')}`);
    this.problems = lines;
  }
}

const UNKNOWN_ID = new Set(['not-found', 'upload-incomplete']);

/** The problem path prefix of a docker block (Rivet flattens `docker` into its owner). */
const ownerPath = (block: DockerBlock): readonly string[] =>
  block.mode === undefined ? ['config', 'matchmaker'] : ['config', 'matchmaker', 'game-modes', `*${block.mode}*`];

const startsWith = (path: readonly string[], prefix: readonly string[]): boolean => prefix.every((s, i) => path[i] === s);

/**
 * Asks the server whether `config` (placeholders where builds and the site will go) would be
 * published as `displayName`; throws {@link ConfigRefused} listing every problem otherwise.
 *
 * @example
 * await preflight(api, gameId, withPlaceholders, { built: blocksToBuild, site: true, displayName: 'v1' });
 */
export async function preflight(api: Api, gameId: string, config: Json, plan: { readonly built: readonly DockerBlock[]; readonly site: boolean; readonly displayName: string }): Promise<void> {
  const { errors } = await api.call<{ errors: WireProblem[] }>('POST', `/cloud/games/${gameId}/versions/validate`, { display_name: plan.displayName, config });
  const excused = (p: WireProblem): boolean => {
    const [last, id] = [p.path.at(-1) ?? '', p.path.at(-2)];
    if (!UNKNOWN_ID.has(last)) return false;
    if (id === 'site-id') return plan.site && startsWith(p.path, ['config', 'cdn']);
    return id === 'image-id' && plan.built.some((b) => p.path.length === ownerPath(b).length + 2 && startsWith(p.path, ownerPath(b)));
  };
  const left = errors.filter((p) => !excused(p));
  if (left.length > 0) throw new ConfigRefused(left);
}
