// A lobby's page: its facts (or why it stopped), ports, players and config, refreshed every 2 s;
// its log followed through the long poll, one stream at a time, the newest line kept in view while
// "follow" is ticked; close (or reopen) to new players, stop, and copy the join address.
import { $, el } from './dom.js';
import { inWords } from './words.js';

const MARKS = { std_out: 'out| ', std_err: 'err| ', tavern: '[tavern] ' };
const STREAMS = { std_out: 'stdout', std_err: 'stderr', tavern: 'Tavern' };

/** A log line `{ stream, line }` as one text line, its stream marked (`err| boom`). */
export const markedLine = (x) => `${MARKS[x.stream] ?? ''}${x.line}`;

const portAddress = (p) => p.host ?? (p.port_range ? `${p.hostname}:${p.port_range.min}-${p.port_range.max}` : `${p.hostname}:${p.port}`);

const joinAddress = (ports) => {
  const p = Object.values(ports ?? {})[0];
  return p === undefined ? undefined : portAddress(p);
};

/**
 * The page, wired to the app: `call(method, path, body)` is the API, `gamePath(rest)` the game's
 * path, `token()` the token signed in with (the log's long poll sends it itself), `showView(name)`
 * the app's view switch, `versionName(id)` a version's name, `age` and `duration` the
 * app's helpers. Returns what the app calls to open a lobby and to stop following it (another view
 * or another namespace).
 */
export function lobbyView({ call, gamePath, token, showView, versionName, age, duration, showError }) {
  let lobbyId;
  let lobby;
  let logs;
  let timer;

  function stop() {
    logs?.abort();
    logs = undefined;
    clearInterval(timer);
    timer = undefined;
    lobbyId = undefined;
  }

  function drawFacts(l, s) {
    const facts = l !== undefined
      ? [['State', l.status === 'ready' ? 'ready' : l.status === 'creating' ? 'starting' : `${l.status}${l.stop_reason ? ` (${l.stop_reason})` : ''}`],
        ...(l.exit_code === undefined ? [] : [['Exit code', String(l.exit_code)]]),
        ['Flags', [l.is_idle ? 'idle' : '', l.is_closed ? 'closed to new players' : 'open', l.is_outdated ? 'outdated' : ''].filter(Boolean).join(', ')],
        ['Players', `${l.total_player_count} of ${l.max_players_normal} (${l.registered_player_count} connected)`], ['Mode', l.lobby_group_name_id], ['Region', l.region_name_id],
        ['Version', versionName(l.version_id)], ['Publicity', l.publicity], ['Started', `${age(l.create_ts)} ago`], ['Ready', l.ready_ts ? `after ${duration(Date.parse(l.ready_ts) - Date.parse(l.create_ts))}` : 'not yet']]
      : [['State', `stopped: ${s.reason}`], ['Exit code', s.exit_code === undefined ? '-' : String(s.exit_code)], ['Ran', duration(s.run_ms)], ['Stopped', `${age(s.stop_ts)} ago`],
        ['Mode', s.lobby_group_name_id], ['Version', versionName(s.version_id)]];
    $('lobby-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  }

  /** `body` as the server answers it: `{ lobby }` while it runs, `{ stopped }` once it has. */
  function draw(body) {
    const l = body.lobby;
    const s = body.stopped;
    drawFacts(l, s);
    const ports = Object.entries(l?.ports ?? {});
    $('lobby-ports').replaceChildren(...(ports.length === 0 ? [el('tr', {}, el('td', { colspan: '3' }, l ? 'No port is reachable (yet).' : 'Stopped: no port.'))] : ports.map(([label, p]) =>
      el('tr', {}, el('td', {}, label), el('td', {}, el('code', {}, portAddress(p))), el('td', {}, p.is_tls ? 'yes' : 'no')))));
    const players = l?.players ?? [];
    $('lobby-players').replaceChildren(...(players.length === 0 ? [el('tr', {}, el('td', { colspan: '3' }, 'No player.'))] : players.map((p) =>
      el('tr', {}, el('td', {}, el('code', {}, p.player_id.slice(0, 8))), el('td', {}, p.status), el('td', {}, `${age(p.create_ts)} ago`)))));
    const config = l === undefined ? { last_lines: s.last_lines.map(markedLine) } : { tags: l.tags, lobby_config: l.lobby_config ?? null, timeouts: l.timeouts, state: l.state ?? null };
    $('lobby-config').textContent = JSON.stringify(config, null, 2);
    const running = l !== undefined && (l.status === 'ready' || l.status === 'creating');
    $('lobby-close').textContent = l?.is_closed ? 'Open to new players' : 'Close to new players';
    $('lobby-close').disabled = !running;
    $('lobby-stop').disabled = !running;
    $('lobby-copy').disabled = joinAddress(l?.ports) === undefined;
  }

  async function refresh() {
    const id = lobbyId;
    if (id === undefined) return;
    const body = await call('GET', gamePath(`/matchmaker/lobbies/${id}`));
    if (lobbyId !== id) return;
    lobby = body.lobby;
    draw(body);
  }

  async function open(id) {
    showView('lobby');
    lobbyId = id;
    $('lobby-title').textContent = `Lobby ${id}`;
    $('lobby-status').textContent = '';
    $('lobby-copied').textContent = '';
    $('lobby-facts').replaceChildren();
    await refresh();
    // Stopped (namespace switched, another view) or another lobby opened while it loaded.
    if (lobbyId !== id) return;
    timer = setInterval(() => void refresh().catch(showError), 2000);
    void follow(id);
  }

  async function follow(id) {
    logs?.abort();
    const controller = new AbortController();
    logs = controller;
    const stream = $('logs-stream').value;
    $('logs-lobby').textContent = `(${STREAMS[stream]}, following)`;
    const node = $('logs');
    node.textContent = '';
    let index;
    while (!controller.signal.aborted) {
      const q = new URLSearchParams({ stream, ...(index === undefined ? {} : { watch_index: index }) });
      try {
        const res = await fetch(gamePath(`/matchmaker/lobbies/${id}/logs?${q}`), { headers: { authorization: `Bearer ${token()}` }, signal: controller.signal });
        const page = await res.json();
        if (!res.ok) throw new Error(inWords(res.status, page.code, page.message));
        const text = page.lines.map((l) => new TextDecoder().decode(Uint8Array.from(atob(l), (c) => c.charCodeAt(0)))).join('\n');
        if (text !== '' && !controller.signal.aborted) {
          node.append(`${text}\n`);
          if ($('logs-follow').checked) node.scrollTop = node.scrollHeight;
        }
        index = page.watch.index;
      } catch (e) {
        if (controller.signal.aborted) return;
        $('logs-lobby').textContent = `(stopped following: ${e.message})`;
        return;
      }
    }
  }

  $('lobby-back').addEventListener('click', () => showView('overview'));
  $('logs-stream').addEventListener('change', () => {
    if (lobbyId !== undefined) void follow(lobbyId);
  });
  $('logs-follow').addEventListener('change', () => {
    if ($('logs-follow').checked) $('logs').scrollTop = $('logs').scrollHeight;
  });
  $('lobby-close').addEventListener('click', () => {
    const closed = !lobby?.is_closed;
    void call('PUT', gamePath(`/matchmaker/lobbies/${lobbyId}/closed`), { is_closed: closed })
      .then(() => ($('lobby-status').textContent = closed ? 'Closed to new players.' : 'Open to new players again.'))
      .then(refresh).catch(showError);
  });
  $('lobby-stop').addEventListener('click', () => {
    if (!confirm(`Stop lobby ${lobbyId}? Its players are disconnected.`)) return;
    void call('DELETE', gamePath(`/matchmaker/lobbies/${lobbyId}`))
      .then(() => ($('lobby-status').textContent = 'Stopping: the lobby leaves the list once its server has exited.'))
      .then(refresh).catch(showError);
  });
  $('lobby-copy').addEventListener('click', () => {
    const address = joinAddress(lobby?.ports);
    if (address === undefined) return;
    navigator.clipboard.writeText(address).then(
      () => ($('lobby-copied').textContent = `copied ${address}`),
      () => ($('lobby-copied').textContent = `copy it by hand: ${address}`),
    );
  });

  return {
    /** Shows lobby `id` and follows its log (the stream selected). */
    open,
    /** Stops following: the log's long poll is aborted and the page no longer refreshes. */
    stop,
  };
}
