/**
 * The deploy preview on the command line against a Tavern app on 127.0.0.1 whose namespace holds a
 * made-up recording: `tavern deploy --preview`, `tavern version preview <config> --json`, and
 * `tavern deploy --gate` (a gate that fails publishes nothing: checked on the server).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRecording } from '../../bench/preview-recording.js';
import { createHttpServer } from '../../src/server/http.js';
import { defaultConfig, harness, type Harness } from '../server/harness.js';
import { tavern } from './run.js';

let h: Harness;
let server: Server;
let dir: string;
let env: Record<string, string>;
let ids: { gameId: string; nsId: string; versionId: string };

/** What the server holds: versions, builds and the namespace's live version. */
const holdings = async () => ({
  versions: (await h.catalog.listVersions(ids.gameId)).length,
  builds: (await h.catalog.listBuilds(ids.gameId)).length,
  live: (await h.catalog.getNamespace(ids.nsId))?.versionId,
});

beforeAll(async () => {
  h = harness({ demand: true });
  const s = await h.setup();
  ids = s;
  await writeRecording(h.demand.store, { namespaceId: s.nsId, start: h.clock.now() - 2 * 3_600_000, minutes: 120, ccu: 12, gameMode: 'default', region: 'local', seed: 9 });
  server = createHttpServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { TAVERN_API: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, TAVERN_TOKEN: s.cloud };
  dir = await mkdtemp(join(tmpdir(), 'tavern-preview-cli-'));
  // The new config: the live one with half the max players.
  const live = defaultConfig(s.buildId) as { matchmaker: Record<string, unknown> };
  await writeFile(join(dir, 'rivet.json'), JSON.stringify({ matchmaker: { ...live.matchmaker, max_players: 2 } }));
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  h.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe('tavern deploy --preview, tavern version preview, tavern deploy --gate', () => {
  it('deploy --preview prints live and new side by side, and creates nothing', async () => {
    const before = await holdings();
    const ran = await tavern(dir, env, 'deploy', '--preview', '--since', '7d');
    expect(ran.stderr).toMatch(/previewing \S*rivet\.json against the live version of my-game\/prod \(nothing is built\)/);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^preview: [\d,]+ recorded requests, /);
    expect(ran.stdout).toMatch(/lobbies created +\d+ +\d+ +\+[\d.]+ %/);
    expect(ran.stdout).toContain('note: the recording is short');
    expect(ran.stdout).toContain('error bound: each column is within ±5 %');
    expect(await holdings()).toEqual(before);
  }, 240_000);

  it('version preview <config> --json prints one JSON object', async () => {
    const ran = await tavern(dir, env, 'version', 'preview', 'rivet.json', '--json', '--seed', '3');
    expect(ran.code).toBe(0);
    const preview = JSON.parse(ran.stdout) as { seed: number; figures: { name: string; live: number; new: number }[] };
    expect(preview.seed).toBe(3);
    const hours = preview.figures.find((f) => f.name === 'lobby_hours');
    expect(hours?.new).toBeGreaterThan(hours?.live ?? Infinity);
  }, 240_000);

  it('a gate that fails exits 1 with the table: no version created, no build uploaded, the live version stays', async () => {
    const before = await holdings();
    // The README's gate.
    const ran = await tavern(dir, env, 'deploy', '--gate', 'wait_p95<=+10%,refused<=+0.5pp,lobby_hours<=+25%');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('the preview gate failed: the new config does not hold the gate, so nothing was built or published');
    expect(ran.stderr).toMatch(/gate lobby_hours<=\+25%: [\d.]+ % — FAILS/);
    // Parties of 4 no longer fit lobbies of 2: they are refused.
    expect(ran.stderr).toMatch(/gate refused<=\+0\.5pp: [\d.]+ pp — FAILS/);
    expect(ran.stderr).toMatch(/refused MATCHMAKER_LOBBY_FULL \(players\) +0 +\d+ +new/);
    expect(ran.stderr).toContain('lobby-hours');
    expect(await holdings()).toEqual(before);
  }, 240_000);

  it('a gate that holds publishes', async () => {
    const before = await holdings();
    const ran = await tavern(dir, env, 'deploy', '--gate', 'lobby_hours<=+10000%', '--name', 'gated');
    expect(ran.stderr).toMatch(/gate lobby_hours<=\+10000%: [\d.]+ % — holds/);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^version [0-9a-f-]+ is live in prod/);
    const after = await holdings();
    expect(after.versions).toBe(before.versions + 1);
    expect(after.live).not.toBe(before.live);
  }, 240_000);

  it('a bad gate or flag exits 2 and says what is wrong, in words', async () => {
    const gate = await tavern(dir, env, 'deploy', '--gate', 'wait<=+10%,lobbies<=+1pp');
    expect(gate.code).toBe(2);
    expect(gate.stderr).toContain('unknown figure wait; the figures are players, seated, refused');
    expect(gate.stderr).toContain('pp (percentage points) is for a share (refused, fill)');
    const since = await tavern(dir, env, 'version', 'preview', 'rivet.json', '--since', 'lately');
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since lately: expected a duration such as 24h or 7d');
    const both = await tavern(dir, env, 'deploy', '--preview', '--gate', 'fill>=+0pp');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--preview and --gate go apart');
  }, 240_000);
});
