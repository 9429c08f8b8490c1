/**
 * `tavern demand export` and `tavern sim calibrate` (the real command) against a Tavern app served
 * on 127.0.0.1, then the round trip: the exported file replays in `tavern sim --recorded` against
 * the calibrated scenario with no editing.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/server/http.js';
import { parseRecordedDemand } from '../../src/sim/scenario/recorded.js';
import { harness, settle, str, type Harness, type W } from '../server/harness.js';
import { tavern } from './run.js';

let h: Harness;
let server: Server;
let dir: string;
let env: Record<string, string>;
/** The namespace's current version config, as the API renders it. */
let versionConfig: unknown;
/** Lobbies made ready (each took 800 ms) and sessions recorded. */
const LOBBIES = 21;

const lobbyToken = (lobbyId: string): string => str(h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] as W | undefined);

beforeAll(async () => {
  h = harness({ demand: true, readyAfterMs: 800 });
  // The CLI's window ends at the real now: the recorded traffic happened in the hour before it.
  h.clock.set(Date.now() - 3_600_000);
  const { pub, cloud, gameId, versionId } = await h.setup();
  versionConfig = (await h.call('GET', `/cloud/games/${gameId}/versions/${versionId}`, { token: cloud })).body['version']?.['config'];
  for (let i = 0; i < LOBBIES; i++) {
    // Each create starts a lobby of its own; its creator plays (i + 1) seconds.
    const pending = h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom', region: 'local' } });
    await settle();
    h.timers.advance(800);
    const r = await pending;
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    const ref = { token: lobbyToken(str(r.body['lobby']?.['lobby_id'])), body: { player_token: str(r.body['player']?.['token']) } };
    await h.call('POST', '/matchmaker/players/connected', ref);
    h.timers.advance((i + 1) * 1_000);
    await h.call('POST', '/matchmaker/players/disconnected', ref);
  }
  await h.recorder?.flush();
  server = createHttpServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { TAVERN_API: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, TAVERN_TOKEN: cloud };
  dir = await mkdtemp(join(tmpdir(), 'tavern-demand-cli-'));
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  h.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe('tavern demand export and tavern sim calibrate', () => {
  it('export → calibrate → sim --recorded: the file round-trips with no editing', async () => {
    const exported = await tavern(dir, env, 'demand', 'export', '-n', 'prod', '--since', '24h', '-o', 'traffic.jsonl');
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(new RegExp(`^${LOBBIES} requests of prod between .* written to traffic.jsonl`));
    const text = await readFile(join(dir, 'traffic.jsonl'), 'utf8');
    const parsed = parseRecordedDemand(text);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
    expect(parsed.value).toHaveLength(LOBBIES);
    expect(parsed.value.map((r) => [r.kind, r.gameMode, r.region, r.party, r.connects])).toEqual(Array.from({ length: LOBBIES }, () => ['create', 'custom', 'local', 1, true]));
    expect(parsed.value.map((r) => r.sessionMs)).toEqual(Array.from({ length: LOBBIES }, (_, i) => (i + 1) * 1_000));

    const calibrated = await tavern(dir, env, 'sim', 'calibrate', '-n', 'prod', '--since', '24h', '-o', 'scenario.json');
    expect(calibrated.stderr).toBe('');
    expect(calibrated.code).toBe(0);
    const out = calibrated.stdout;
    expect(out).toContain('region local:');
    expect(out).toContain(`  lobby start delay: constant 800 ms (from ${LOBBIES} lobbies made ready)`);
    expect(out).toMatch(/ {2}crash rate: not fitted \(0\.\d\d lobby-hours, at least 1 needed\): kept 0\.0000 per lobby-hour/);
    expect(out).toContain(`  session length: lognormal median 11000 ms, p95 20000 ms (mu 9.306, sigma 0.363) (from ${LOBBIES} sessions)`);
    expect(out).toContain('region lnd-atl:\n  lobby start delay: not fitted (0 samples, at least 20 needed): kept lognormal median 3000 ms');
    expect(out).toContain('scenario written to scenario.json');
    const scenario = JSON.parse(await readFile(join(dir, 'scenario.json'), 'utf8')) as { version: unknown; duration_ms: number; demand: Record<string, unknown> };
    expect(versionConfig).toBeDefined();
    expect(scenario.version).toEqual(versionConfig);
    expect(scenario.duration_ms).toBe(24 * 3_600_000); // the window: --since 24h
    expect(Object.keys(scenario.demand)).toEqual(['custom']);

    const replayed = await tavern(dir, {}, 'sim', 'scenario.json', '--recorded', 'traffic.jsonl', '--json');
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    const run = JSON.parse(replayed.stdout) as { metrics: { arrivals: { requests: number } } };
    expect(run.metrics.arrivals.requests).toBe(LOBBIES);
  }, 240_000);

  it('an empty window writes an empty file and says so', async () => {
    // Nothing happened in the last minute (the traffic ended before it on the harness clock).
    const ran = await tavern(dir, env, 'demand', 'export', '-n', 'prod', '--since', '1m', '-o', 'empty.jsonl');
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(/^no requests in prod between .* and .*: wrote an empty file empty.jsonl\n$/);
    expect(await readFile(join(dir, 'empty.jsonl'), 'utf8')).toBe('');
  }, 120_000);

  it('a recorded file with a mode and a region the scenario lacks: sim names them', async () => {
    await writeFile(join(dir, 'odd.jsonl'), '{"at_ms":0,"kind":"find","game_mode":"ctf","region":"mars","party":1,"session_ms":1000,"connects":true}\n');
    const ran = await tavern(dir, {}, 'sim', 'scenario.json', '--recorded', 'odd.jsonl');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('does not fit the scenario');
    expect(ran.stderr).toContain('line.1.game-mode.*ctf*.not-found');
    expect(ran.stderr).toContain('line.1.region.*mars*.not-found');
  }, 120_000);

  it('bad usage exits 2 and says what is wrong', async () => {
    const since = await tavern(dir, env, 'demand', 'export', '--since', 'yesterday', '-o', 'x.jsonl');
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since yesterday: expected a duration such as 90m, 24h or 7d');
    const noOut = await tavern(dir, env, 'sim', 'calibrate', '-n', 'prod');
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('-o scenario.json is required');
  }, 120_000);
});
