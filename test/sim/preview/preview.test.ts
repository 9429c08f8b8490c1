/**
 * The deploy preview on a made-up recording (bench/preview-recording.ts) in the memory store: a new
 * version that halves max players needs more lobbies and lobby-hours; the same seed gives the same
 * preview, with its replays in worker threads or not; the preview says what it cannot speak for.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryDemandStore } from '../../../src/adapters/memory/demand-store.js';
import { previewDeploy, type PreviewInput } from '../../../src/sim/preview/preview.js';
import { previewJson, previewLines } from '../../../src/sim/preview/report.js';
import { SERIES_POINTS, seriesStep } from '../../../src/sim/preview/series.js';
import { writeRecording } from '../../../bench/preview-recording.js';

const NS = 'ns-preview';
const NOW = Date.UTC(2026, 10, 20, 12);
const HOURS = 3;

const version = (maxPlayers: number, modes: Record<string, unknown> = { default: {} }): Record<string, unknown> => ({
  matchmaker: {
    regions: { local: { tier: 'basic-1d1', idle_lobbies: { min: 1, max: 2 } } },
    max_players: maxPlayers,
    docker: { image_id: 'eef2c57d-a893-45f7-8ea3-397e4c5d2ec9', ports: { game: { port: 7778, protocol: 'udp' } } },
    game_modes: modes,
  },
});

const store = new MemoryDemandStore();
let base: PreviewInput;

beforeAll(async () => {
  await writeRecording(store, { namespaceId: NS, start: NOW - HOURS * 3_600_000, minutes: HOURS * 60, ccu: 40, gameMode: 'default', region: 'local', seed: 5 });
  base = {
    store, namespaceId: NS, now: NOW, live: version(8), next: version(4),
    regions: [{ id: 'local', display_name: 'Local' }], lobbyCountMax: 1_000, prices: { 'basic-1d1': 0.5 }, seed: 7,
  };
});

const row = (rows: readonly { name: string; live: number; next: number }[], name: string): { live: number; next: number } => {
  const r = rows.find((x) => x.name === name);
  if (r === undefined) throw new Error(`no row ${name}`);
  return r;
};

describe('deploy preview', () => {
  it('a version that halves max players shows more lobbies and lobby-hours, at a higher cost', async () => {
    const p = await previewDeploy(base);
    expect(p.requests).toBeGreaterThan(100);
    expect(row(p.rows, 'players').live).toBe(row(p.rows, 'players').next);
    expect(row(p.rows, 'lobbies').next).toBeGreaterThan(row(p.rows, 'lobbies').live);
    expect(row(p.rows, 'lobby_hours').next).toBeGreaterThan(row(p.rows, 'lobby_hours').live);
    expect(row(p.rows, 'cost').next).toBeGreaterThan(row(p.rows, 'cost').live);
    expect(row(p.rows, 'peak_lobbies.local').next).toBeGreaterThan(row(p.rows, 'peak_lobbies.local').live);
    expect(p.runs.live.violations).toEqual([]);
    expect(p.runs.next.violations).toEqual([]);
    const lines = previewLines(previewJson(p));
    expect(lines.join('\n')).toMatch(/lobby-hours\s+[\d.,]+\s+[\d.,]+\s+\+[\d.]+ %/);
    expect(lines.join('\n')).toContain('error bound: each column is within ±5 %');
  });

  it('is deterministic for a seed', async () => {
    const a = previewJson(await previewDeploy(base));
    const b = previewJson(await previewDeploy(base));
    expect(b).toEqual(a);
  });

  it('gives the same preview, run for run, with its replays in worker threads as one after the other in this thread', async () => {
    const threads = await previewDeploy(base);
    const one = await previewDeploy({ ...base, threads: false });
    // Everything, the runs' metrics, samples and trace hashes included.
    expect(threads).toEqual(one);
    expect(threads.runs.live.trace.hash).toBe(one.runs.live.trace.hash);
    expect(threads.runs.next.trace.hash).toBe(one.runs.next.trace.hash);
  });

  it('says when the recording is shorter than asked and than a day, and when nothing is priced', async () => {
    const { prices: _, ...unpriced } = base;
    const p = await previewDeploy(unpriced);
    expect(p.window.from).toBeGreaterThan(p.window.askedFrom);
    expect(p.notes.join('\n')).toContain('the recording starts at');
    expect(p.notes.join('\n')).toContain('the recording is short (3.0 h');
    expect(p.notes.join('\n')).toContain('no cost: the operator has set no tier prices (TAVERN_TIER_PRICES)');
    expect(p.rows.some((r) => r.name === 'cost')).toBe(false);
  });

  it('names the demand it assumed for a new game mode, and the requests a removed one refuses', async () => {
    const added = await previewDeploy({ ...base, sinceMs: 3_600_000, next: version(8, { default: {}, duel: {} }) });
    expect(added.notes.join('\n')).toContain('game mode duel is new: nothing recorded asks for it, so the preview assumes no players for it; its idle lobbies (1 in local) are counted');
    const removed = await previewDeploy({ ...base, sinceMs: 3_600_000, next: version(8, { duel: {} }) });
    expect(removed.notes.join('\n')).toMatch(/\d+ recorded requests ask for game mode default, which the new config does not offer: the new version refuses them/);
    expect(row(removed.rows, 'refused').next).toBe(100);
  });

  it('carries both runs over time, in buckets of whole minutes, at most 120 whatever the window: more lobbies under the halved version', async () => {
    const wire = previewJson(await previewDeploy(base));
    const { series } = wire;
    expect(series.start_ts).toBe(wire.window.start_ts);
    // Three hours: 2-minute buckets (90 of them).
    expect(series.step_ms).toBe(120_000);
    for (const run of [series.live, series.new]) {
      for (const values of [run.players, run.lobbies, run.ports, run.wait_p95_ms]) expect(values).toHaveLength(90);
    }
    const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
    expect(sum(series.new.lobbies)).toBeGreaterThan(sum(series.live.lobbies));
    expect(Math.max(...series.new.players)).toBeGreaterThan(0);
    expect(series.new.wait_p95_ms.some((v) => v !== null && v > 0)).toBe(true);
    // Sampled once a minute: never above the table's peak (which counts every change).
    expect(Math.max(...series.new.lobbies)).toBeLessThanOrEqual(row(wire.figures.map((f) => ({ ...f, next: f.new })), 'peak_lobbies').next);
    expect(seriesStep(7 * 24 * 3_600_000)).toBe(84 * 60_000);
    expect(Math.ceil((7 * 24 * 3_600_000) / seriesStep(7 * 24 * 3_600_000))).toBeLessThanOrEqual(SERIES_POINTS);
    expect(seriesStep(1)).toBe(60_000);
  });
});
