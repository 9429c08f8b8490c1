/**
 * What a tier gives a lobby's container. Rivet's tiers (`basic-<n>d<d>`) are n/d of a 4-core
 * node's share per lobby unit: `basic-1d1` is one core, `basic-1d16` a sixteenth of one. Tavern
 * gives 2 GiB of memory per core, at least 128 MiB, never swapped.
 */

export interface TierResources {
  /** CPU, in thousandths of a core (`RIVET_CPU`). */
  readonly cpuMillicores: number;
  /** Memory limit in bytes (`RIVET_MEMORY`); swap is not granted on top. */
  readonly memoryBytes: number;
}

const TIER = /^basic-(\d+)d(\d+)$/;
const MIB = 1024 * 1024;
const MEMORY_PER_CORE = 2048 * MIB;
const MIN_MEMORY = 128 * MIB;

/**
 * The resources of a tier name from the catalogue; undefined for a name outside it (validation
 * refuses those).
 *
 * @example
 * tierResources('basic-1d2'); // { cpuMillicores: 500, memoryBytes: 1073741824 }
 */
export const tierResources = (tier: string): TierResources | undefined => {
  const m = TIER.exec(tier);
  if (m === null) return undefined;
  const cores = Number(m[1]) / Number(m[2]);
  if (!Number.isFinite(cores) || cores <= 0) return undefined;
  return { cpuMillicores: Math.round(cores * 1000), memoryBytes: Math.max(MIN_MEMORY, Math.round(cores * MEMORY_PER_CORE)) };
};
