import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig, harness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** The default test config with a find verification on a loopback URL. */
const withLocalVerification = (buildId: string): unknown => {
  const config = defaultConfig(buildId) as { matchmaker: { game_modes: Record<string, Record<string, unknown>> } };
  for (const mode of Object.values(config.matchmaker.game_modes)) {
    mode['actions'] = { find: { enabled: true, verification: { url: 'http://127.0.0.1:9000/verify', headers: {} } } };
  }
  return config;
};

describe('verification hosts the operator allows (TAVERN_EGRESS_ALLOW)', () => {
  it('refuses a loopback verification URL by default, with its path', async () => {
    h = harness();
    await expect(h.setup(withLocalVerification)).rejects.toThrow(/verification-config.*url.*invalid-ip/);
  });

  it('accepts it when the operator allows that range', async () => {
    h = harness({ config: { egressAllow: ['127.0.0.0/8'] } });
    const env = await h.setup(withLocalVerification);
    expect(env).toBeDefined();
  });
});
