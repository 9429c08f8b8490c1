/** The server's environment parsing and its log redaction. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_EXPANDED_BYTES } from '../../src/adapters/docker/archive-bytes.js';
import { parseEnv, parseRegions } from '../../src/server/env.js';
import { DEFAULT_UPLOAD_LIMITS } from '../../src/services/upload-types.js';
import { createLogger } from '../../src/server/logger.js';

describe('parseEnv', () => {
  it('has the documented defaults', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      host: '127.0.0.1', port: 8080, dataDir: './.tavern', egressAllow: [], trustProxyHeaders: false, sqliteSync: 'normal',
      publishHost: '127.0.0.1', lobbyLogMaxBytes: 8 * 1024 * 1024, reconcileMs: 30_000,
      hardening: { pidsLimit: 256, tmpMiB: 64, readOnlyRoot: true }, allowHostNetwork: false,
    });
    expect(env.hardening.user).toBeUndefined();
    expect(env.dockerNetwork).toBeUndefined();
    expect(env.metricsToken).toBeUndefined();
    expect(env.runtime).toBeUndefined();
    expect(env.instanceId).toBeUndefined();
    expect(env.regions.map((r) => r.id)).toEqual(['local']);
    expect(env.databaseUrl).toBeUndefined();
    expect(env.adminToken).toBeUndefined();
  });

  it('with no variable serves a game on one machine: the game proxy on (80/443, else 8880/8444), names under localhost, the CDN on (8081, HTTPS 8443)', () => {
    const env = parseEnv({});
    expect(env.proxy).toMatchObject({ mode: 'auto', host: '127.0.0.1', httpPort: 80, httpsPort: 443, fallback: { http: 8880, https: 8444 } });
    expect(env.proxy.tls).toBeUndefined();
    // Browsers and curl resolve *.localhost to this machine: no /etc/hosts to edit.
    expect(env.jobDomain).toBe('localhost');
    expect(env.cdnDomain).toBe('cdn.localhost');
    expect(env.cdn).toEqual({ host: '127.0.0.1', port: 8081, tls: { dir: '.tavern/tls/cdn', port: 8443, local: true }, fallback: { port: 0, tlsPort: 0 } });
    expect(parseEnv({ TAVERN_DATA_DIR: 'data' }).cdn?.tls?.dir).toBe('data/tls/cdn');
  });

  it('keeps the operator\'s explicit settings: ports without fallback, their domains, their certificate folder, the CDN off', () => {
    const env = parseEnv({
      TAVERN_PROXY_HTTP_PORT: '8081', TAVERN_PROXY_HTTPS_PORT: '8444', TAVERN_JOB_DOMAIN: 'games.example.com', TAVERN_CDN_DOMAIN: 'cdn.example.com',
      TAVERN_CDN_PORT: '80', TAVERN_CDN_TLS_DIR: '/certs', TAVERN_CDN_TLS_PORT: '443',
    });
    expect(env.proxy.fallback).toBeUndefined();
    expect(env).toMatchObject({ jobDomain: 'games.example.com', cdnDomain: 'cdn.example.com', cdn: { port: 80, tls: { dir: '/certs', port: 443 } } });
    expect(env.cdn?.fallback).toBeUndefined();
    expect(parseEnv({ TAVERN_PROXY_HTTP_PORT: '8081' }).proxy.fallback).toEqual({ https: 8444 });
    expect(parseEnv({ TAVERN_CDN_DOMAIN: 'cdn.example.com' }).cdn).toEqual({ host: '127.0.0.1', port: 8081, fallback: { port: 0 } });
    expect(parseEnv({ TAVERN_CDN_PORT: 'off' }).cdn).toBeUndefined();
  });

  it('reads every variable', () => {
    const env = parseEnv({
      TAVERN_HOST: '0.0.0.0', TAVERN_PORT: '9000', TAVERN_DATA_DIR: '/var/lib/tavern', DATABASE_URL: 'postgres://x', TAVERN_ADMIN_TOKEN: 'secret',
      TAVERN_REGIONS: 'local,lnd-atl', TAVERN_PUBLIC_ORIGIN: 'https://api.example.com', TAVERN_EGRESS_ALLOW: '127.0.0.1/32, localhost',
      TAVERN_RUNTIME: 'fake', TAVERN_TRUST_PROXY: 'true', TAVERN_CDN_DOMAIN: 'cdn.example.com',
      TAVERN_HCAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/h', TAVERN_TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/t',
      TAVERN_SQLITE_SYNC: 'full', DOCKER_HOST: 'unix:///run/docker.sock', TAVERN_PUBLISH_HOST: '0.0.0.0', TAVERN_INSTANCE_ID: 'node-a',
      TAVERN_LOBBY_API_ORIGIN: 'http://10.0.0.2:8080', TAVERN_LOBBY_LOG_MAX_BYTES: '65536', TAVERN_RECONCILE_MS: '5000',
      TAVERN_DOCKER_PIDS_LIMIT: '1024', TAVERN_DOCKER_TMP_MB: '256', TAVERN_DOCKER_READ_ONLY_ROOT: 'false', TAVERN_DOCKER_USER: '65534:65534',
      TAVERN_DOCKER_ALLOW_HOST_NETWORK: 'true', TAVERN_DOCKER_NETWORK: 'games_net', TAVERN_METRICS_TOKEN: 'scraper-0123456789abcdef',
    });
    expect(env).toMatchObject({
      host: '0.0.0.0', port: 9000, dataDir: '/var/lib/tavern', databaseUrl: 'postgres://x', adminToken: 'secret', publicOrigin: 'https://api.example.com',
      egressAllow: ['127.0.0.1/32', 'localhost'], runtime: 'fake', trustProxyHeaders: true, cdnDomain: 'cdn.example.com',
      hcaptchaVerifyUrl: 'http://127.0.0.1:9/h', turnstileVerifyUrl: 'http://127.0.0.1:9/t', sqliteSync: 'full',
      dockerHost: 'unix:///run/docker.sock', publishHost: '0.0.0.0', instanceId: 'node-a', lobbyApiOrigin: 'http://10.0.0.2:8080',
      lobbyLogMaxBytes: 65536, reconcileMs: 5000, hardening: { pidsLimit: 1024, tmpMiB: 256, readOnlyRoot: false, user: '65534:65534' },
      allowHostNetwork: true, dockerNetwork: 'games_net', metricsToken: 'scraper-0123456789abcdef',
    });
    expect(parseEnv({ TAVERN_RUNTIME: 'docker' }).runtime).toBe('docker');
    expect(parseEnv({ TAVERN_RUNTIME: 'none' }).runtime).toBe('none');
    expect(parseEnv({ TAVERN_RUNTIME: 'swarm', TAVERN_SWARM_HOST: 'tcp://10.0.0.1:2375' })).toMatchObject({ runtime: 'swarm', swarmHost: 'tcp://10.0.0.1:2375' });
    expect(() => parseEnv({ TAVERN_RUNTIME: 'nomad' })).toThrow('TAVERN_RUNTIME must be "docker", "swarm", "fake" or "none"');
  });

  it('the fake runtime: a ready delay drawn from a scenario distribution, its seed, a directory for each lobby\'s environment', () => {
    expect(parseEnv({}).fake).toEqual({ seed: 1 });
    expect(parseEnv({ TAVERN_FAKE_READY_DELAY: '{"kind":"lognormal","median":2000,"p95":6000}', TAVERN_FAKE_SEED: '7', TAVERN_FAKE_LOBBY_DIR: '/tmp/lobbies' }).fake).toEqual({
      readyDelayMs: { kind: 'lognormal', median: 2000, p95: 6000 }, seed: 7, lobbyDir: '/tmp/lobbies',
    });
    expect(() => parseEnv({ TAVERN_FAKE_READY_DELAY: '2000' })).toThrow(/TAVERN_FAKE_READY_DELAY is not a distribution/);
    expect(() => parseEnv({ TAVERN_FAKE_READY_DELAY: 'lognormal' })).toThrow(/TAVERN_FAKE_READY_DELAY must be a distribution in JSON/);
    expect(() => parseEnv({ TAVERN_FAKE_READY_DELAY: '{"kind":"lognormal","median":2000}' })).toThrow(/p95/);
    expect(() => parseEnv({ TAVERN_FAKE_SEED: '4294967296' })).toThrow(/TAVERN_FAKE_SEED/);
  });

  it('refuses bad values with a clear message', () => {
    expect(() => parseEnv({ TAVERN_PORT: 'http' })).toThrow(/TAVERN_PORT/);
    expect(() => parseEnv({ TAVERN_SQLITE_SYNC: 'off' })).toThrow(/TAVERN_SQLITE_SYNC/);
    expect(() => parseEnv({ TAVERN_RUNTIME: 'podman' })).toThrow(/TAVERN_RUNTIME/);
    expect(() => parseEnv({ TAVERN_LOBBY_LOG_MAX_BYTES: '12' })).toThrow(/TAVERN_LOBBY_LOG_MAX_BYTES/);
    expect(() => parseEnv({ TAVERN_RECONCILE_MS: 'soon' })).toThrow(/TAVERN_RECONCILE_MS/);
    expect(() => parseEnv({ TAVERN_INSTANCE_ID: 'a b' })).toThrow(/TAVERN_INSTANCE_ID/);
    expect(() => parseEnv({ TAVERN_DOCKER_PIDS_LIMIT: '0' })).toThrow(/TAVERN_DOCKER_PIDS_LIMIT/);
    expect(() => parseEnv({ TAVERN_DOCKER_READ_ONLY_ROOT: 'no' })).toThrow(/TAVERN_DOCKER_READ_ONLY_ROOT/);
    expect(() => parseEnv({ TAVERN_REGIONS: 'Bad Region' })).toThrow(/TAVERN_REGIONS/);
    expect(() => parseEnv({ TAVERN_DOCKER_ALLOW_HOST_NETWORK: 'yes' })).toThrow(/TAVERN_DOCKER_ALLOW_HOST_NETWORK must be "true" or "false"/);
    for (const network of ['host', 'none', '-x', 'a b', 'x'.repeat(129)]) expect(() => parseEnv({ TAVERN_DOCKER_NETWORK: network }), network).toThrow(/TAVERN_DOCKER_NETWORK must name an existing bridge network/);
    for (const token of ['short', 'has a space in it 0123', 'x'.repeat(513)]) expect(() => parseEnv({ TAVERN_METRICS_TOKEN: token }), token).toThrow(/TAVERN_METRICS_TOKEN/);
  });

  it('TAVERN_DOCKER_USER: uid[:gid] or a user name (and group), never root', () => {
    for (const user of ['65534', '65534:65534', '1000:0', 'nobody', 'nobody:nogroup', 'game_1', '4294967294']) expect(parseEnv({ TAVERN_DOCKER_USER: user }).hardening.user, user).toBe(user);
    for (const bad of ['0', '0:0', '00', 'root', 'root:root']) expect(() => parseEnv({ TAVERN_DOCKER_USER: bad }), bad).toThrow(/TAVERN_DOCKER_USER must not be root/);
    for (const bad of ['-1', '1:2:3', 'Nobody', 'a b', '65534:', ':65534', '4294967295', '1.5', 'nobody;rm']) {
      expect(() => parseEnv({ TAVERN_DOCKER_USER: bad }), bad).toThrow(/TAVERN_DOCKER_USER must be uid\[:gid\]/);
    }
  });

  it('bounds what a build expands to at 4 × the build upload limit by default; TAVERN_BUILD_MAX_EXPANDED_BYTES sets it, in bytes', () => {
    expect(parseEnv({}).buildMaxExpandedBytes).toBe(4 * (DEFAULT_UPLOAD_LIMITS.maxBuildBytes + 1));
    expect(parseEnv({}).buildMaxExpandedBytes).toBe(DEFAULT_MAX_EXPANDED_BYTES);
    expect(parseEnv({ TAVERN_BUILD_MAX_EXPANDED_BYTES: '1048576' }).buildMaxExpandedBytes).toBe(1_048_576);
    expect(parseEnv({ TAVERN_BUILD_MAX_EXPANDED_BYTES: ' 64000000000 ' }).buildMaxExpandedBytes).toBe(64e9);
    for (const bad of ['1048575', '0', '-5', '32GB', '1e9', '1.5', 'off', '99999999999999999999']) {
      expect(() => parseEnv({ TAVERN_BUILD_MAX_EXPANDED_BYTES: bad })).toThrow(
        `TAVERN_BUILD_MAX_EXPANDED_BYTES must be a whole number of bytes, at least 1048576 (1 MiB); the default is 32000000000; got ${bad}`,
      );
    }
  });

  it('records demand for 7 days by default; TAVERN_DEMAND_RETENTION sets how long, off records nothing', () => {
    expect(parseEnv({}).demandRetentionMs).toBe(7 * 86_400_000);
    expect(parseEnv({ TAVERN_DEMAND_RETENTION: '36h' }).demandRetentionMs).toBe(36 * 3_600_000);
    expect(parseEnv({ TAVERN_DEMAND_RETENTION: 'off' }).demandRetentionMs).toBeUndefined();
    for (const bad of ['7', '30m', '1.5d', 'forever']) expect(() => parseEnv({ TAVERN_DEMAND_RETENTION: bad })).toThrow(/TAVERN_DEMAND_RETENTION must be a duration of at least an hour/);
  });

  it('keeps analytics history for 7 days by default; TAVERN_ANALYTICS_RETENTION sets how long (at least an hour)', () => {
    expect(parseEnv({}).analyticsRetentionMs).toBe(7 * 86_400_000);
    expect(parseEnv({ TAVERN_ANALYTICS_RETENTION: '30d' }).analyticsRetentionMs).toBe(30 * 86_400_000);
    expect(parseEnv({ TAVERN_ANALYTICS_RETENTION: '1h' }).analyticsRetentionMs).toBe(3_600_000);
    for (const bad of ['7', '59m', '1.5d', 'off', '-1h']) {
      expect(() => parseEnv({ TAVERN_ANALYTICS_RETENTION: bad })).toThrow(`TAVERN_ANALYTICS_RETENTION must be a duration of at least an hour (e.g. 24h, 7d, 30d); got ${bad}`);
    }
  });

  it('TAVERN_TIER_PRICES prices a lobby-hour per tier (the deploy preview\'s cost); unset: no prices', () => {
    expect(parseEnv({}).tierPrices).toBeUndefined();
    expect(parseEnv({ TAVERN_TIER_PRICES: '{"basic-1d1": 0.12, "basic-1d4": 0}' }).tierPrices).toEqual({ 'basic-1d1': 0.12, 'basic-1d4': 0 });
    expect(() => parseEnv({ TAVERN_TIER_PRICES: '{"basic-1d1": ' })).toThrow('TAVERN_TIER_PRICES is not JSON; e.g. {"basic-1d1": 0.12, "basic-1d4": 0.03}');
    expect(() => parseEnv({ TAVERN_TIER_PRICES: '[0.1]' })).toThrow(/must be a JSON object of tier → price per lobby-hour/);
    expect(() => parseEnv({ TAVERN_TIER_PRICES: '{"huge": 1}' })).toThrow(/names "huge", which is not a tier/);
    expect(() => parseEnv({ TAVERN_TIER_PRICES: '{"basic-1d1": -1}' })).toThrow(/gives basic-1d1 -1: a price is a number ≥ 0/);
  });
});

describe('the CDN and S3 variables', () => {
  it('has local blobs by default', () => {
    expect(parseEnv({}).s3).toBeUndefined();
  });

  it('reads the CDN listener, its host defaulting to TAVERN_HOST and its TLS port to 8443', () => {
    expect(parseEnv({ TAVERN_HOST: '0.0.0.0', TAVERN_CDN_PORT: '8081', TAVERN_CDN_DOMAIN: 'cdn.test' }).cdn).toEqual({ host: '0.0.0.0', port: 8081 });
    expect(parseEnv({ TAVERN_CDN_PORT: '80', TAVERN_CDN_HOST: '10.0.0.1', TAVERN_CDN_TLS_DIR: '/certs' }).cdn).toEqual({ host: '10.0.0.1', port: 80, tls: { dir: '/certs', port: 8443 } });
    expect(parseEnv({ TAVERN_CDN_PORT: '80', TAVERN_CDN_TLS_DIR: '/certs', TAVERN_CDN_TLS_PORT: '443' }).cdn?.tls).toEqual({ dir: '/certs', port: 443 });
  });

  it('reads S3 storage, path-style by default with an endpoint', () => {
    expect(parseEnv({ TAVERN_S3_BUCKET: 'builds' }).s3).toEqual({ bucket: 'builds', region: 'us-east-1', forcePathStyle: false });
    expect(parseEnv({
      TAVERN_S3_BUCKET: 'builds', TAVERN_S3_ENDPOINT: 'http://127.0.0.1:4569/', TAVERN_S3_REGION: 'eu-west-1',
      TAVERN_S3_ACCESS_KEY_ID: 'id', TAVERN_S3_SECRET_ACCESS_KEY: 'key',
    }).s3).toEqual({ bucket: 'builds', region: 'eu-west-1', endpoint: 'http://127.0.0.1:4569', accessKeyId: 'id', secretAccessKey: 'key', forcePathStyle: true });
    expect(parseEnv({ TAVERN_S3_BUCKET: 'builds', TAVERN_S3_ENDPOINT: 'http://s3.local', TAVERN_S3_PATH_STYLE: 'false' }).s3?.forcePathStyle).toBe(false);
  });

  it.each([
    [{ TAVERN_CDN_PORT: '70000' }, 'TAVERN_CDN_PORT must be a port number'],
    [{ TAVERN_CDN_PORT: 'off', TAVERN_CDN_TLS_DIR: '/certs' }, 'TAVERN_CDN_TLS_DIR needs the CDN (TAVERN_CDN_PORT is off)'],
    [{ TAVERN_CDN_PORT: '80', TAVERN_CDN_TLS_DIR: '/c', TAVERN_CDN_TLS_PORT: 'x' }, 'TAVERN_CDN_TLS_PORT must be a port number'],
    [{ TAVERN_S3_ENDPOINT: 'http://127.0.0.1:4569' }, 'TAVERN_S3_ENDPOINT needs TAVERN_S3_BUCKET'],
    [{ TAVERN_S3_BUCKET: 'No_Such' }, 'TAVERN_S3_BUCKET must be a bucket name (3-63 characters of a-z 0-9 . -)'],
    [{ TAVERN_S3_BUCKET: 'b12', TAVERN_S3_ENDPOINT: 'ftp://x' }, 'TAVERN_S3_ENDPOINT must be an http(s) origin, e.g. http://127.0.0.1:4569'],
    [{ TAVERN_S3_BUCKET: 'b12', TAVERN_S3_ACCESS_KEY_ID: 'id' }, 'TAVERN_S3_ACCESS_KEY_ID and TAVERN_S3_SECRET_ACCESS_KEY go together'],
    [{ TAVERN_S3_BUCKET: 'b12', TAVERN_S3_PATH_STYLE: 'yes' }, 'TAVERN_S3_PATH_STYLE must be "true" or "false"'],
  ])('refuses %j', (vars, message) => {
    expect(() => parseEnv(vars)).toThrow(message);
  });
});

describe('parseRegions', () => {
  it('reads JSON with display names, providers and coordinates', () => {
    const regions = parseRegions('[{"id":"eu","display_name":"Europe","provider":"Hetzner","latitude":50.1,"longitude":8.6},"us"]');
    expect(regions).toEqual([
      { id: 'eu', displayName: 'Europe', provider: 'Hetzner', coords: { latitude: 50.1, longitude: 8.6 } },
      { id: 'us', displayName: 'us', provider: 'Tavern' },
    ]);
  });

  it('refuses duplicates and empty lists', () => {
    expect(() => parseRegions('a,a')).toThrow(/twice/);
    expect(() => parseRegions('[]')).toThrow(/at least one/);
  });
});

describe('log redaction', () => {
  it('never writes tokens or authorization headers', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) });
    for (const pretty of [false, true]) {
      lines.length = 0;
      const logger = createLogger({ pretty, destination: sink });
      logger.info({ req: { headers: { authorization: 'Bearer abc' } }, token: 'tok', body: { player_token: 'p' }, effect: { env: { RIVET_TOKEN: 'lobby.x' } } }, 'x');
      const out = lines.join('');
      for (const secret of ['Bearer abc', 'tok"', '"p"', 'lobby.x']) expect(out, `pretty: ${pretty}`).not.toContain(secret);
      expect(out).toContain('[redacted]');
    }
  });

  it('writes JSON for a log collector, and a readable line (time, level, message, fields) for a terminal', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) });
    createLogger({ pretty: false, destination: sink }).info({ port: 8080 }, 'tavern listening');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 30, msg: 'tavern listening', port: 8080 });
    lines.length = 0;
    createLogger({ pretty: true, destination: sink }).info({ port: 8080 }, 'tavern listening');
    expect(lines.join('')).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: tavern listening \{"port":8080\}\n$/);
  });
});
