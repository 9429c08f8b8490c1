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

  it('knows nothing outside the catalogue shape', () => {
    for (const name of ['', 'basic', 'basic-1d0', 'basic-0d1', 'premium-1d1', 'basic-1d1 ', 'basic-ad1']) expect(tierResources(name)).toBeUndefined();
  });
});
