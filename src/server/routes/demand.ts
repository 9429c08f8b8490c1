/**
 * Recorded demand (a Tavern extension beside live analytics): the export of a namespace's
 * requests as the simulator's recorded-demand JSONL, streamed, and what the server observed of its
 * lobbies and sessions, which `tavern sim calibrate` fits a scenario's infrastructure to.
 */
import { currentVersion } from '../../core/world.js';
import { exportDemand, observeDemand, type DemandWindow, type Summary } from '../../services/demand.js';
import { requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import type { DemandPort } from '../deps.js';
import { fail } from '../errors.js';
import type { Router } from '../router.js';
import { RawAnswer } from './dashboard.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const PATH = '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/demand';

/** A time parameter: RFC 3339 or epoch milliseconds. */
const timeParam = (ctx: Ctx, name: string): number | undefined => {
  const raw = ctx.url.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(ms)) fail('API_BAD_QUERY', { name, reason: 'expected an RFC 3339 time or epoch milliseconds' });
  return ms;
};

/** `start` (default: a day before `end`) and `end` (default: now); `start` before `end`. */
const windowOf = (ctx: Ctx): DemandWindow => {
  const to = timeParam(ctx, 'end') ?? ctx.services.clock.now();
  const from = timeParam(ctx, 'start') ?? to - DAY_MS;
  if (from >= to) fail('API_BAD_QUERY', { name: 'start', reason: 'must be before end' });
  return { from, to };
};

const demandOf = (ctx: Ctx): DemandPort => {
  const demand = ctx.services.demand;
  if (demand === undefined) fail('API_NOT_FOUND', { method: ctx.request.method, path: ctx.request.path.slice(0, 256) });
  return demand;
};

/**
 * `GET .../analytics/matchmaker/demand?start=&end=`: the requests of the window, one JSON object
 * per line (`at_ms` from `start`), streamed; an empty body when nothing happened. The window is
 * echoed in `tavern-window-start` / `tavern-window-end`.
 */
async function exportRoute(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const demand = demandOf(ctx);
  const window = windowOf(ctx);
  const state = (await ctx.services.matchmaker.snapshot()).namespaces.get(ns.id);
  const version = state === undefined ? undefined : currentVersion(state);
  const stream = exportDemand(demand.store, ns.id, window, {
    now: ctx.services.clock.now(),
    regionOf: (mode) => version?.modes.get(mode)?.regions[0]?.name,
  });
  const headers = { 'content-type': 'application/x-ndjson', 'tavern-window-start': ts(window.from), 'tavern-window-end': ts(window.to) };
  return new RawAnswer({ status: 200, headers, body: '', stream });
}

const summary = (s: Summary): unknown => ({ samples: s.samples, ...(s.median === undefined ? {} : { median: s.median, p95: s.p95 }) });

/** `GET .../analytics/matchmaker/demand/observed?start=&end=`: per region and per game mode, what calibration fits. */
async function observedRoute(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const demand = demandOf(ctx);
  const window = windowOf(ctx);
  const seen = await observeDemand(demand.store, ns.id, window, ctx.services.clock.now());
  return {
    start_ts: ts(window.from),
    end_ts: ts(window.to),
    version_id: ns.versionId,
    lobby_count_max: ns.settings.lobbyCountMax,
    answer_ms: summary(seen.answerMs),
    regions_info: ctx.services.regions.map((r) => ({ id: r.id, display_name: r.displayName, ...(r.coords === undefined ? {} : { coords: r.coords }) })),
    regions: Object.fromEntries(Object.entries(seen.regions).map(([id, r]) => [id, {
      lobby_start_delay_ms: summary(r.lobbyStartDelayMs),
      crashes: r.crashes,
      lobby_hours: r.lobbyHours,
      session_ms: summary(r.sessionMs),
      seat_wait_ms: summary(r.seatWaitMs),
    }])),
    game_modes: Object.fromEntries(Object.entries(seen.modes).map(([mode, regions]) => [mode, Object.fromEntries(Object.entries(regions).map(([region, m]) => [region, {
      requests: m.requests,
      parties: m.parties,
      seats: m.seats,
      connected: m.connected,
      session_ms: summary(m.sessionMs),
    }]))])),
  };
}

export function registerDemand(router: Router<Handler>): void {
  router.add('GET', PATH, exportRoute).add('GET', `${PATH}/observed`, observedRoute);
}
