import { describe, expect, it } from 'vitest';
import { TIER_CATALOGUE, tierResources } from '../../../src/core/config/index.js';

describe('tierResources', () => {
  it('gives each catalogue tier its share of a core and 2 GiB per core, at least 128 MiB', () => {
    const mib = 1024 * 1024;
    expect(TIER_CATALOGUE.map((t) => tierResources(t))).toEqual([
      { cpuMillicores: 4000, memoryBytes: 8192 * mib },
      { cpuMillicores: 2000, memoryBytes: 4096 * mib },
      { cpuMillicores: 1000, memoryBytes: 2048 * mib },
      { cpuMillicores: 500, memoryBytes: 1024 * mib },
      { cpuMillicores: 250, memoryBytes: 512 * mib },
      { cpuMillicores: 125, memoryBytes: 256 * mib },
      { cpuMillicores: 63, memoryBytes: 128 * mib },
    ]);
  });

  it('reads multi-digit tiers an operator adds, and never goes below 128 MiB', () => {
    const mib = 1024 * 1024;
    // n/d cores: 12/4 = 3 cores, 6 GiB; 1/32 core = 31.25 millicores, 64 MiB raised to 128 MiB.
    expect(tierResources('basic-12d4')).toEqual({ cpuMillicores: 3000, memoryBytes: 6144 * mib });
    expect(tierResources('basic-1d32')).toEqual({ cpuMillicores: 31, memoryBytes: 128 * mib });
  });

  it('knows nothing outside the catalogue shape', () => {
    for (const name of ['', 'basic', 'basic-1d0', 'basic-0d1', 'premium-1d1', 'basic-1d1 ', 'basic-ad1', 'xbasic-1d1', 'my-basic-1d1']) expect(tierResources(name)).toBeUndefined();
  });
});
