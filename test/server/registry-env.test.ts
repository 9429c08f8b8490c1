/**
 * `TAVERN_REGISTRY` and its companions: what a valid setting becomes, each invalid one refused with
 * a message that names the variable and says what it must be, and a server that will not start on
 * an invalid one (it says why on stderr).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/server/env.js';
import { parseRegistryEnv } from '../../src/server/registry-env.js';
import { startServer } from './process.js';

describe('parseRegistryEnv', () => {
  it('is absent unless TAVERN_REGISTRY is set', () => {
    expect(parseRegistryEnv({})).toBeUndefined();
    expect(parseRegistryEnv({ TAVERN_REGISTRY: ' ' })).toBeUndefined();
    expect(parseEnv({}).registry).toBeUndefined();
  });

  it('reads host:port, a prefix, plain HTTP allowed only when said, and credentials', () => {
    expect(parseRegistryEnv({ TAVERN_REGISTRY: '127.0.0.1:5000' })).toEqual({ address: '127.0.0.1:5000', insecure: false });
    expect(parseRegistryEnv({ TAVERN_REGISTRY: 'registry.example:5000/games/tavern/', TAVERN_REGISTRY_INSECURE: 'true' }))
      .toEqual({ address: 'registry.example:5000', prefix: 'games/tavern', insecure: true });
    expect(parseRegistryEnv({ TAVERN_REGISTRY: 'registry.example', TAVERN_REGISTRY_USERNAME: 'ci', TAVERN_REGISTRY_PASSWORD: 's3cret' }))
      .toEqual({ address: 'registry.example', insecure: false, auth: { username: 'ci', password: 's3cret' } });
    expect(parseRegistryEnv({ TAVERN_REGISTRY: 'localhost/a.b_c__d-e' })).toEqual({ address: 'localhost', prefix: 'a.b_c__d-e', insecure: false });
    expect(parseRegistryEnv({ TAVERN_REGISTRY: '[::1]:5000' })).toEqual({ address: '[::1]:5000', insecure: false });
    expect(parseEnv({ TAVERN_REGISTRY: '10.0.0.2:5000', TAVERN_RUNTIME: 'docker' }).registry).toEqual({ address: '10.0.0.2:5000', insecure: false });
  });

  it.each([
    [{ TAVERN_REGISTRY: 'http://127.0.0.1:5000' }, /TAVERN_REGISTRY must be host\[:port\]\[\/prefix\].*without a scheme \(plain HTTP is TAVERN_REGISTRY_INSECURE=true\)/],
    [{ TAVERN_REGISTRY: 'registry/games' }, /TAVERN_REGISTRY's host "registry" needs a dot or a port \(or is localhost\): Docker would read "registry\/…" as a repository on Docker Hub/],
    [{ TAVERN_REGISTRY: '127.0.0.1:70000' }, /TAVERN_REGISTRY's port must be 1 to 65535/],
    [{ TAVERN_REGISTRY: 'reg_istry.example:5000' }, /its host "reg_istry.example:5000" is not a host name or address/],
    [{ TAVERN_REGISTRY: '127.0.0.1:5000/Games' }, /TAVERN_REGISTRY's prefix must be lowercase path components.*"Games" is not one/],
    [{ TAVERN_REGISTRY: '127.0.0.1:5000/games//x' }, /"" is not one/],
    [{ TAVERN_REGISTRY: '127.0.0.1:5000/game:1' }, /"game:1" is not one/],
    [{ TAVERN_REGISTRY: `127.0.0.1:5000/${'a'.repeat(240)}` }, /TAVERN_REGISTRY is too long: image names are at most 255 characters/],
    [{ TAVERN_REGISTRY: '127.0.0.1:5000', TAVERN_REGISTRY_INSECURE: '1' }, /TAVERN_REGISTRY_INSECURE must be "true" \(plain HTTP allowed\) or "false"/],
    [{ TAVERN_REGISTRY: '127.0.0.1:5000', TAVERN_REGISTRY_USERNAME: 'ci' }, /TAVERN_REGISTRY_USERNAME and TAVERN_REGISTRY_PASSWORD go together/],
    [{ TAVERN_REGISTRY_INSECURE: 'true' }, /TAVERN_REGISTRY_INSECURE needs TAVERN_REGISTRY/],
    [{ TAVERN_REGISTRY_PASSWORD: 'x' }, /TAVERN_REGISTRY_PASSWORD needs TAVERN_REGISTRY/],
  ])('refuses %o', (env, message) => {
    expect(() => parseEnv(env)).toThrow(message);
  });

  it('needs a runtime that runs containers', () => {
    expect(() => parseEnv({ TAVERN_REGISTRY: '127.0.0.1:5000', TAVERN_RUNTIME: 'fake' })).toThrow('TAVERN_REGISTRY needs a runtime that runs containers: builds are pushed through its engine (TAVERN_RUNTIME is fake)');
    expect(() => parseEnv({ TAVERN_REGISTRY: '127.0.0.1:5000', TAVERN_RUNTIME: 'none' })).toThrow(/TAVERN_RUNTIME is none/);
  });
});

it('a server with an invalid TAVERN_REGISTRY does not start, and says why', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-registry-env-'));
  try {
    const failed = await startServer('tavern with a bad registry', { TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir, TAVERN_RUNTIME: 'none', TAVERN_REGISTRY: 'https://registry.example' })
      .then((s) => s.stop().then(() => 'it started'), (e: unknown) => (e as Error).message);
    expect(failed).toMatch(/exited \(1\) before listening:[\s\S]*tavern: TAVERN_REGISTRY must be host\[:port\]\[\/prefix\], e\.g\. registry\.example:5000\/games, without a scheme/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
