// Tavern dashboard: ES modules, no build step. Talks to the same origin's API with the token kept
// in sessionStorage. The overview refreshes the lobbies every second, the recently stopped ones
// every 5 s (and whenever a lobby leaves the table), the server's health every 5 s and the history
// charts (kept by the server, per minute) every 15 s. A lobby's page follows its log through the
// long poll; switching namespace or leaving the page stops following. A lobby's page lives in
// lobby.js, the versions view in versions.js, the deploy preview's in preview.js, the tokens and
// domains' in access.js.
import { accessView } from './access.js';
import { timeChart } from './charts.js';
import { $, el, empty } from './dom.js';
import { lobbyView, markedLine } from './lobby.js';
import { previewView } from './preview.js';
import { versionsView } from './versions.js';
import { inWords } from './words.js';

const state = {
  token: sessionStorage.getItem('tavern-token'), gameId: undefined, game: undefined, nsId: undefined, ns: undefined, deployed: false,
  timers: [], lastLobbies: new Set(), stoppedAt: 0, range: '1h',
};
const STOPPED_EVERY_MS = 5000;
const STOPPED_LINES = 5;
const COLORS = ['#0b5cad', '#2e8540', '#b35c00', '#7a3e9d'];
const STEP_WORDS = { 60000: 'per minute', 600000: 'per 10 minutes', 3600000: 'per hour' };

class ApiError extends Error {
  constructor(status, code, message, metadata) {
    super(inWords(status, code, message));
    this.code = code;
    this.metadata = metadata;
  }
}

async function call(method, path, body) {
  const headers = { authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, json.code, json.message ?? res.statusText, json.metadata);
  return json;
}

const button = (text, onClick, attrs = {}) => {
  const b = el('button', { type: 'button', ...attrs }, text);
  b.addEventListener('click', () => void Promise.resolve(onClick()).catch(showError));
  return b;
};
const duration = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
};
const age = (iso) => duration(Date.now() - Date.parse(iso));
const bytes = (n) => (n < 1024 ? `${n} B` : n < 2 ** 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);
const showError = (e) => {
  $(state.gameId === undefined ? 'sign-in-error' : 'error').textContent = e.message;
};
const clearError = () => {
  $('error').textContent = '';
};
const every = (ms, fn) => state.timers.push(setInterval(() => void fn().catch(showError), ms));
const gamePath = (rest = '') => `/cloud/games/${state.gameId}${rest}`;
const nsPath = (rest = '') => gamePath(`/namespaces/${state.nsId}${rest}`);
const reloadGame = async () => {
  ({ game: state.game } = await call('GET', gamePath()));
};
const game = () => state.game;
const nsId = () => state.nsId;
const versionName = (id) => state.game?.versions?.find((v) => v.version_id === id)?.display_name ?? id?.slice(0, 8) ?? 'unknown';
const versions = versionsView({ call, nsPath, reloadGame, game, nsId, published: loadVersion, button, age });
const preview = previewView({ call, nsPath, liveConfig: () => (state.ns?.version_id ? $('version-config').textContent : undefined), showError });
const access = accessView({ call, gamePath, nsPath, game, namespaceLoaded: (namespace) => (state.ns = namespace), button, age, showError });
const lobby = lobbyView({ call, gamePath, token: () => state.token, showView, versionName, age, duration, showError });

// --- views ---------------------------------------------------------------------------------

function showView(name) {
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== `view-${name}`;
  for (const b of document.querySelectorAll('.tabs button')) {
    if (b.dataset.view === name) b.setAttribute('aria-current', 'page');
    else b.removeAttribute('aria-current');
  }
  if (name !== 'lobby') lobby.stop();
  clearError();
  if (name === 'versions') void versions.load().catch(showError);
  if (name === 'access') void access.load().catch(showError);
  if (name === 'preview') preview.prepare();
}

// --- overview: banners, version, history, lobbies, stopped ----------------------------------

async function refreshHealth() {
  const res = await fetch('/health');
  const health = await res.json().catch(() => ({}));
  const banners = [];
  const rt = health.runtime;
  if (rt !== undefined && !rt.reachable) {
    banners.push(rt.runtime === 'none'
      ? 'No runtime: this server starts no lobby (TAVERN_RUNTIME=none); finds that need a new lobby are refused.'
      : `The ${rt.runtime} runtime is unreachable${rt.error ? ` (${rt.error})` : ''}: no lobby can start until it is back; Tavern keeps checking.`);
  }
  const proxy = health.proxy;
  if (proxy !== undefined && proxy.running === false) banners.push(`The game proxy is off${proxy.off ? ` (${proxy.off})` : ''}: players reach lobbies only through host-network ports.`);
  state.healthBanners = banners;
  drawBanners();
}

function drawBanners() {
  const items = [...(state.healthBanners ?? []), ...(state.backoffBanners ?? []), ...(state.crashBanners ?? [])];
  $('banners').replaceChildren(...items.map((text) => el('p', { class: 'banner' }, text)));
}

async function refreshLobbies() {
  if (state.nsId === undefined) return;
  const { lobbies, start_backoff: backoff = [] } = await call('GET', nsPath('/analytics/matchmaker/live'));
  const regions = new Map((state.game.available_regions ?? []).map((r) => [r.region_id, r.region_display_name ?? r.region_name_id]));
  $('lobbies').replaceChildren(...lobbies.map((l) => {
    const flags = [l.is_ready ? 'ready' : 'starting', l.is_idle ? 'idle' : '', l.is_closed ? 'closed' : '', l.is_outdated ? 'outdated' : ''].filter(Boolean).join(', ');
    return el('tr', { 'data-lobby': l.lobby_id }, el('td', {}, el('code', {}, l.lobby_id.slice(0, 8))), el('td', {}, regions.get(l.region_id) ?? l.region_id),
      el('td', {}, l.lobby_group_name_id), el('td', {}, `${l.total_player_count}/${l.max_players_normal}`), el('td', {}, flags), el('td', {}, age(l.create_ts)),
      el('td', {}, button('Open', () => lobby.open(l.lobby_id), { 'aria-label': `Open lobby ${l.lobby_id}` })));
  }));
  empty('lobbies-empty', lobbies.length > 0 ? undefined : state.deployed
    ? 'No lobby running: a player\'s find starts one (or keep some ready with idle_lobbies in rivet.toml).'
    : 'No lobby yet: deploy a version first (tavern deploy).');
  state.backoffBanners = backoff.map((b) => `Version ${versionName(b.version_id)}, mode ${b.game_mode}: ${b.failures} lobbies in a row failed to start; the next start waits until ${new Date(b.until_ts).toLocaleTimeString()} (start back-off). Open the last one's logs: lobby ${b.last_lobby_id.slice(0, 8)}.`);
  drawBanners();
  const ids = new Set(lobbies.map((l) => l.lobby_id));
  const left = [...state.lastLobbies].some((id) => !ids.has(id));
  state.lastLobbies = ids;
  if (left || Date.now() - state.stoppedAt >= STOPPED_EVERY_MS) await refreshStopped();
  $('lobbies-updated').textContent = `(updated ${new Date().toLocaleTimeString()})`;
}

/** Three or more failures of one version within 15 minutes: a crash loop, said in a banner (a lobby whose host was lost, `lost`, is no failure of its version). */
function crashLoops(stops) {
  const recent = stops.filter((s) => s.failed && s.reason !== 'lost' && Date.now() - Date.parse(s.stop_ts) < 15 * 60_000);
  const byVersion = new Map();
  for (const s of recent) byVersion.set(s.version_id, [...(byVersion.get(s.version_id) ?? []), s]);
  return [...byVersion].filter(([, list]) => list.length >= 3).map(([version, list]) =>
    `Crash loop: ${list.length} lobbies of version ${versionName(version)} failed in the last 15 minutes (last: ${list[0].reason}${list[0].exit_code === undefined ? '' : `, exit code ${list[0].exit_code}`}). See "Recently stopped" below.`);
}

async function refreshStopped() {
  if (state.nsId === undefined) return;
  state.stoppedAt = Date.now();
  const everyStop = $('stopped-all').checked;
  const [{ lobbies }, failures] = await Promise.all([
    call('GET', nsPath(`/analytics/matchmaker/stopped?failed=${!everyStop}`)),
    everyStop ? call('GET', nsPath('/analytics/matchmaker/stopped?failed=true&limit=100')).then((r) => r.lobbies) : undefined,
  ]);
  $('stopped').replaceChildren(...lobbies.map((l) => {
    const lines = l.last_lines.slice(-STOPPED_LINES).map(markedLine).join('\n');
    return el('tr', { 'data-lobby': l.lobby_id, class: l.failed ? 'failed' : '' }, el('td', {}, el('code', {}, l.lobby_id.slice(0, 8))), el('td', {}, l.lobby_group_name_id), el('td', {}, l.reason),
      el('td', {}, l.exit_code === undefined ? '-' : String(l.exit_code)), el('td', {}, duration(l.run_ms)), el('td', {}, `${age(l.stop_ts)} ago`),
      el('td', {}, el('pre', { class: 'last-lines' }, lines)), el('td', {}, button('Open', () => lobby.open(l.lobby_id), { 'aria-label': `Open lobby ${l.lobby_id}` })));
  }));
  empty('stopped-empty', lobbies.length > 0 ? undefined : everyStop ? 'No lobby stopped in the last 24 hours.' : 'No lobby failed in the last 24 hours.');
  state.crashBanners = crashLoops(failures ?? lobbies);
  drawBanners();
}

/** The history points as one value per bucket (missing buckets: `fill`). */
function buckets(h, pick, fill) {
  const n = Math.round((Date.parse(h.to_ts) - Date.parse(h.from_ts)) / h.step_ms);
  const values = Array.from({ length: n }, () => fill);
  const from = Date.parse(h.from_ts);
  for (const p of h.points) {
    const i = Math.round((Date.parse(p.ts) - from) / h.step_ms);
    if (i >= 0 && i < n) values[i] = pick(p);
  }
  return values;
}

const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + b, 0);

async function refreshHistory() {
  if (state.nsId === undefined) return;
  const h = await call('GET', nsPath(`/analytics/matchmaker/history?range=${state.range}`));
  const from = Date.parse(h.from_ts), to = Date.parse(h.to_ts), stepMs = h.step_ms;
  const per = STEP_WORDS[stepMs] ?? `per ${stepMs / 1000}s`;
  const draw = (id, label, unit, series) => $(id).replaceChildren(timeChart({ label, unit, from, to, stepMs, series: series.map((s, i) => ({ color: COLORS[i], ...s })) }));
  const lobbies = (k) => buckets(h, (p) => p.lobbies[k], 0);
  draw('chart-lobbies', 'Lobbies by state', 'lobbies (peak)', [{ name: 'active', values: lobbies('active') }, { name: 'idle', values: lobbies('idle') }, { name: 'starting', values: lobbies('starting') }, { name: 'closed', values: lobbies('closed') }]);
  draw('chart-players', 'Players', 'players (peak)', [{ name: 'players', values: buckets(h, (p) => p.players, 0) }]);
  draw('chart-requests', 'Requests and refusals', `requests ${per}`, [
    { name: 'answered', values: buckets(h, (p) => p.requests.find + p.requests.join + p.requests.create, 0) },
    { name: 'refused', values: buckets(h, (p) => sum(p.refusals), 0) },
  ]);
  const secs = (ms) => (ms === undefined ? null : ms / 1000);
  draw('chart-latency', 'Lobby start time', 'seconds', [{ name: 'p50', values: buckets(h, (p) => secs(p.start_p50_ms), null) }, { name: 'p95', values: buckets(h, (p) => secs(p.start_p95_ms), null) }]);
  draw('chart-starts', 'Lobbies started and failed', `lobbies ${per}`, [{ name: 'started', values: buckets(h, (p) => p.starts, 0) }, { name: 'failed', values: buckets(h, (p) => sum(p.failures), 0) }]);
  const codes = {};
  for (const p of h.points) for (const [c, n] of Object.entries(p.refusals)) codes[c] = (codes[c] ?? 0) + n;
  $('refusal-codes').textContent = Object.keys(codes).length === 0 ? '' : `Refusals by code: ${Object.entries(codes).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ×${n}`).join(', ')}`;
  empty('history-empty', h.points.length > 0 ? undefined : 'Nothing recorded in this range yet: the charts fill as players find lobbies (one point a minute, kept by the server).');
}

async function loadUploads() {
  const [{ builds }, { sites }] = await Promise.all([call('GET', gamePath('/builds')), call('GET', gamePath('/cdn/sites'))]);
  const row = (kind, u) => el('tr', {}, el('td', {}, kind), el('td', {}, u.display_name), el('td', {}, bytes(u.content_length)), el('td', {}, u.complete ? 'complete' : 'pending'), el('td', {}, age(u.create_ts)));
  $('uploads').replaceChildren(...builds.map((b) => row('build', b)), ...sites.map((s) => row('site', s)));
}

// --- game and namespace -----------------------------------------------------------------------

async function loadVersion() {
  const ns = state.game.namespaces.find((n) => n.namespace_id === state.nsId);
  state.ns = ns;
  const version = ns?.version_id ? (await call('GET', gamePath(`/versions/${ns.version_id}`))).version : undefined;
  // A new game's first version (0.0.1) is empty: nothing is deployed until tavern deploy publishes one.
  state.deployed = version !== undefined && Object.keys(version.config ?? {}).length > 0;
  $('version-config').textContent = version === undefined ? '' : JSON.stringify(version.config, null, 2);
  if (state.deployed) {
    $('version-name').textContent = `${version.display_name} (${version.version_id})`;
    $('version-details').hidden = false;
  } else {
    $('version-name').textContent = `No version yet${version === undefined ? '' : ` (${version.display_name} is the game's empty first version)`}: run tavern deploy in your game's folder.`;
    $('version-details').hidden = true;
  }
}

async function selectNamespace(nsId) {
  for (const t of state.timers) clearInterval(t);
  state.timers = [];
  lobby.stop();
  state.nsId = nsId;
  state.lastLobbies = new Set();
  state.stoppedAt = 0;
  access.reset();
  preview.reset();
  showView('overview');
  await loadVersion();
  every(1000, refreshLobbies);
  every(5000, refreshHealth);
  every(15000, refreshHistory);
  await Promise.all([refreshLobbies(), refreshHealth(), refreshHistory(), loadUploads()]);
}

async function selectGame(gameId) {
  state.gameId = gameId;
  await reloadGame();
  $('namespace').replaceChildren(...state.game.namespaces.map((n) => el('option', { value: n.namespace_id }, n.display_name)));
  const prod = state.game.namespaces.find((n) => n.name_id === 'prod') ?? state.game.namespaces[0];
  if (prod !== undefined) {
    $('namespace').value = prod.namespace_id;
    await selectNamespace(prod.namespace_id);
  }
}

async function signIn() {
  const { agent } = await call('GET', '/cloud/auth/inspect');
  sessionStorage.setItem('tavern-token', state.token);
  const { games } = await call('GET', '/cloud/games');
  $('game').replaceChildren(...games.map((g) => el('option', { value: g.game_id }, g.display_name)));
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('picker').hidden = false;
  const first = agent.game_cloud?.game_id ?? games[0]?.game_id;
  if (first === undefined) {
    showView('overview');
    $('version-name').textContent = 'No game yet: create one with tavern game create <name> (admin token).';
    return;
  }
  $('game').value = first;
  await selectGame(first);
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  state.token = $('token').value.trim();
  $('sign-in-error').textContent = '';
  signIn().catch((e) => {
    sessionStorage.removeItem('tavern-token');
    $('sign-in-error').textContent = e.message;
  });
});
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem('tavern-token');
  location.reload();
});
for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => showView(b.dataset.view));
for (const r of document.querySelectorAll('input[name=range]')) {
  r.addEventListener('change', () => {
    state.range = r.value;
    void refreshHistory().catch(showError);
  });
}
$('game').addEventListener('change', (e) => void selectGame(e.target.value).catch(showError));
$('namespace').addEventListener('change', (e) => void selectNamespace(e.target.value).catch(showError));
$('stopped-all').addEventListener('change', () => void refreshStopped().catch(showError));
$('sim-form').addEventListener('submit', (event) => {
  event.preventDefault();
  $('sim-summary').textContent = 'running…';
  call('POST', '/dashboard/sim', { scenario: $('sim-scenario').value, minutes: Number($('sim-minutes').value) }).then(({ summary, charts }) => {
    $('sim-summary').replaceChildren(el('pre', {}, summary));
    // The charts are SVG made by Tavern's own chart code from numbers; parsed as SVG, never as HTML.
    $('sim-charts').replaceChildren(...Object.entries(charts).map(([name, svg]) => {
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      return el('figure', {}, el('figcaption', {}, name.replace(/\.svg$/, '')), document.importNode(doc.documentElement, true));
    }));
  }, (e) => {
    $('sim-summary').textContent = e.message;
  });
});
if (state.token !== null) signIn().catch(() => sessionStorage.removeItem('tavern-token'));
