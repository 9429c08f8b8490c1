// Hello game's page: find a lobby through the matchmaker API, connect to it with a WebSocket
// (wss:// through the game proxy), show what the other players say. The API is Tavern's default
// (http://127.0.0.1:8080) unless the page's address says `?api=<origin>`. No token is needed: a
// page served from the game's CDN address is let in by its origin (domain public auth).
const api = new URLSearchParams(location.search).get('api') ?? 'http://127.0.0.1:8080';
const status = document.getElementById('status');
const log = document.getElementById('log');

const show = (text) => {
  const line = document.createElement('li');
  line.textContent = text;
  log.append(line);
};

async function play() {
  const res = await fetch(`${api}/matchmaker/lobbies/find`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ game_modes: ['default'] }),
  });
  const found = await res.json();
  if (!res.ok) throw new Error(`find failed: ${found.code}: ${found.message}`);
  const { hostname, port, is_tls } = found.ports.default;
  const socket = new WebSocket(`${is_tls ? 'wss' : 'ws'}://${hostname}:${port}/?token=${encodeURIComponent(found.player.token)}`);
  socket.onopen = () => {
    status.textContent = `connected to lobby ${found.lobby.lobby_id}`;
    status.dataset.lobby = found.lobby.lobby_id;
  };
  socket.onmessage = (event) => show(`them: ${event.data}`);
  socket.onclose = (event) => (status.textContent = `disconnected (${event.code})`);
  document.getElementById('say').onsubmit = (event) => {
    event.preventDefault();
    const input = document.getElementById('message');
    socket.send(input.value);
    show(`me: ${input.value}`);
    input.value = '';
  };
}

play().catch((error) => (status.textContent = String(error)));
