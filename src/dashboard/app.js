// Tavern dashboard: one ES module, no build step. Talks to the same origin's API with the token
// kept in sessionStorage. Lobbies refresh every second, the recently stopped ones every 5 s and
// whenever a lobby leaves the table, logs follow through the long poll, charts are inline SVG
// drawn from the samples taken while the page is open.
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem('tavern-token'), gameId: undefined, game: undefined, nsId: undefined, timer: undefined, logs: undefined, samples: [], lastLobbies: new Set(), lastFinds: 0, stoppedAt: 0 };
const STOPPED_EVERY_MS = 5000;
const STOPPED_LINES = 5;
const MARKS = { std_out: 'out| ', std_err: 'err| ', tavern: '[tavern] ' };

class ApiError extends Error {}

async function call(method, path, body) {
  const headers = { authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(`${json.code ?? res.status}: ${json.message ?? res.statusText}`);
  return json;
}

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};
const duration = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
};
const age = (iso) => duration(Date.now() - Date.parse(iso));
const bytes = (n) => (n < 1024 ? `${n} B` : n < 2 ** 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);

/** An inline SVG line chart of `points` ([{t, v}]), labelled for screen readers. */
function chart(label, points) {
  const w = 320, h = 120, pad = 28;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(h));
  svg.setAttribute('role', 'img');
  const round = (v) => Number(v.toFixed(2));
  const last = round(points.at(-1)?.v ?? 0);
  svg.setAttribute('aria-label', `${label}: ${points.length} samples, now ${last}, peak ${round(Math.max(0, ...points.map((p) => p.v)))}`);
  const max = Math.max(1, ...points.map((p) => p.v));
  const t0 = points[0]?.t ?? 0, t1 = Math.max(t0 + 1, points.at(-1)?.t ?? 1);
  const x = (t) => pad + ((t - t0) / (t1 - t0)) * (w - pad - 4);
  const y = (v) => h - pad / 2 - (v / max) * (h - pad);
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
  };
  add('line', { x1: pad, y1: y(0), x2: w - 4, y2: y(0), stroke: '#555' });
  add('line', { x1: pad, y1: y(0), x2: pad, y2: y(max), stroke: '#555' });
  add('text', { x: 2, y: y(max) + 4 }, String(round(max)));
  add('text', { x: 2, y: y(0) }, '0');
  add('polyline', { points: points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '), fill: 'none', stroke: '#0b5cad', 'stroke-width': 2, class: 'series' });
  return svg;
}

function drawCharts() {
  const s = state.samples;
  $('chart-lobbies').replaceChildren(chart('Lobbies', s.map((p) => ({ t: p.t, v: p.lobbies }))));
  $('chart-players').replaceChildren(chart('Players', s.map((p) => ({ t: p.t, v: p.players }))));
  $('chart-starts').replaceChildren(chart('Lobbies started per second', s.map((p) => ({ t: p.t, v: p.starts }))));
  $('chart-finds').replaceChildren(chart('Finds per second', s.map((p) => ({ t: p.t, v: p.finds }))));
}

async function refreshLobbies() {
  if (state.nsId === undefined) return;
  const { lobbies, finds_received: findsReceived = 0 } = await call('GET', `/cloud/games/${state.gameId}/namespaces/${state.nsId}/analytics/matchmaker/live`);
  const regions = new Map((state.game.available_regions ?? []).map((r) => [r.region_id, r.region_display_name ?? r.region_name_id]));
  $('lobbies').replaceChildren(...lobbies.map((l) => {
    const flags = [l.is_ready ? 'ready' : 'starting', l.is_idle ? 'idle' : '', l.is_closed ? 'closed' : '', l.is_outdated ? 'outdated' : ''].filter(Boolean).join(', ');
    const button = el('button', { type: 'button', 'aria-label': `Follow the logs of lobby ${l.lobby_id}` }, 'Logs');
    button.addEventListener('click', () => followLogs(l.lobby_id));
    return el('tr', { 'data-lobby': l.lobby_id }, el('td', {}, el('code', {}, l.lobby_id.slice(0, 8))), el('td', {}, regions.get(l.region_id) ?? l.region_id),
      el('td', {}, l.lobby_group_name_id), el('td', {}, `${l.total_player_count}/${l.max_players_normal}`), el('td', {}, flags), el('td', {}, age(l.create_ts)), el('td', {}, button));
  }));
  const ids = new Set(lobbies.map((l) => l.lobby_id));
  const starts = [...ids].filter((id) => !state.lastLobbies.has(id)).length;
  const left = [...state.lastLobbies].some((id) => !ids.has(id));
  state.lastLobbies = ids;
  if (left || Date.now() - state.stoppedAt >= STOPPED_EVERY_MS) await refreshStopped();
  // Finds per second between two reads of this instance's counter (0 on the first read or after a restart).
  const t = Date.now() / 1000;
  const previous = state.samples.at(-1);
  const finds = previous === undefined || findsReceived < state.lastFinds ? 0 : (findsReceived - state.lastFinds) / Math.max(0.001, t - previous.t);
  state.lastFinds = findsReceived;
  state.samples.push({ t, lobbies: lobbies.length, players: lobbies.reduce((n, l) => n + l.total_player_count, 0), starts, finds });
  if (state.samples.length > 300) state.samples.shift();
  $('lobbies-updated').textContent = `(updated ${new Date().toLocaleTimeString()})`;
  drawCharts();
}

/** The recently stopped lobbies (failures only, unless every stop is asked for), each with its last log lines. */
async function refreshStopped() {
  if (state.nsId === undefined) return;
  state.stoppedAt = Date.now();
  const failed = !$('stopped-all').checked;
  const { lobbies } = await call('GET', `/cloud/games/${state.gameId}/namespaces/${state.nsId}/analytics/matchmaker/stopped?failed=${failed}`);
  $('stopped').replaceChildren(...lobbies.map((l) => {
    const button = el('button', { type: 'button', 'aria-label': `Follow the logs of lobby ${l.lobby_id}` }, 'Logs');
    button.addEventListener('click', () => followLogs(l.lobby_id));
    const lines = l.last_lines.slice(-STOPPED_LINES).map((line) => `${MARKS[line.stream] ?? ''}${line.line}`).join('\n');
    return el('tr', { 'data-lobby': l.lobby_id }, el('td', {}, el('code', {}, l.lobby_id.slice(0, 8))), el('td', {}, l.lobby_group_name_id), el('td', {}, l.reason),
      el('td', {}, l.exit_code === undefined ? '-' : String(l.exit_code)), el('td', {}, duration(l.run_ms)), el('td', {}, `${age(l.stop_ts)} ago`),
      el('td', {}, el('pre', { class: 'last-lines' }, lines)), el('td', {}, button));
  }));
}

async function followLogs(lobbyId) {
  state.logs?.abort();
  const controller = new AbortController();
  state.logs = controller;
  const stream = $('logs-stream').value;
  $('logs-lobby').textContent = `(lobby ${lobbyId.slice(0, 8)}, ${{ std_out: 'stdout', std_err: 'stderr', tavern: 'Tavern' }[stream]}, following)`;
  $('logs').textContent = '';
  let index;
  while (!controller.signal.aborted) {
    const q = new URLSearchParams({ stream, ...(index === undefined ? {} : { watch_index: index }) });
    try {
      const res = await fetch(`/cloud/games/${state.gameId}/matchmaker/lobbies/${lobbyId}/logs?${q}`, { headers: { authorization: `Bearer ${state.token}` }, signal: controller.signal });
      if (!res.ok) throw new ApiError(`logs: ${res.status}`);
      const page = await res.json();
      const text = page.lines.map((l) => new TextDecoder().decode(Uint8Array.from(atob(l), (c) => c.charCodeAt(0)))).join('\n');
      if (text !== '') $('logs').append(`${text}\n`);
      index = page.watch.index;
    } catch (e) {
      if (controller.signal.aborted) return;
      $('logs-lobby').textContent = `(stopped: ${e.message})`;
      return;
    }
  }
}

async function loadUploads() {
  const [{ builds }, { sites }] = await Promise.all([call('GET', `/cloud/games/${state.gameId}/builds`), call('GET', `/cloud/games/${state.gameId}/cdn/sites`)]);
  const row = (kind, u) => el('tr', {}, el('td', {}, kind), el('td', {}, u.display_name), el('td', {}, bytes(u.content_length)), el('td', {}, u.complete ? 'complete' : 'pending'), el('td', {}, age(u.create_ts)));
  $('uploads').replaceChildren(...builds.map((b) => row('build', b)), ...sites.map((s) => row('site', s)));
}

async function selectNamespace(nsId) {
  state.nsId = nsId;
  state.samples = [];
  state.lastLobbies = new Set();
  state.stoppedAt = 0;
  const ns = state.game.namespaces.find((n) => n.namespace_id === nsId);
  if (ns !== undefined) {
    const { version } = await call('GET', `/cloud/games/${state.gameId}/versions/${ns.version_id}`);
    $('version-name').textContent = `${version.display_name} (${version.version_id})`;
    $('version-config').textContent = JSON.stringify(version.config, null, 2);
  }
  clearInterval(state.timer);
  state.timer = setInterval(() => refreshLobbies().catch(showError), 1000);
  await Promise.all([refreshLobbies(), loadUploads()]);
}

async function selectGame(gameId) {
  state.gameId = gameId;
  ({ game: state.game } = await call('GET', `/cloud/games/${gameId}`));
  $('namespace').replaceChildren(...state.game.namespaces.map((n) => el('option', { value: n.namespace_id }, n.display_name)));
  const prod = state.game.namespaces.find((n) => n.name_id === 'prod') ?? state.game.namespaces[0];
  if (prod !== undefined) {
    $('namespace').value = prod.namespace_id;
    await selectNamespace(prod.namespace_id);
  }
}

const showError = (e) => {
  $('sign-in-error').textContent = e.message;
};

async function signIn() {
  const { agent } = await call('GET', '/cloud/auth/inspect');
  sessionStorage.setItem('tavern-token', state.token);
  const { games } = await call('GET', '/cloud/games');
  $('game').replaceChildren(...games.map((g) => el('option', { value: g.game_id }, g.display_name)));
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('picker').hidden = false;
  const first = agent.game_cloud?.game_id ?? games[0]?.game_id;
  if (first !== undefined) {
    $('game').value = first;
    await selectGame(first);
  }
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  state.token = $('token').value.trim();
  $('sign-in-error').textContent = '';
  signIn().catch((e) => {
    sessionStorage.removeItem('tavern-token');
    showError(e);
  });
});
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem('tavern-token');
  location.reload();
});
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
