// Hello game's server: one WebSocket room per lobby. Every message a player sends is passed to the
// other players of the lobby. Tavern (like Rivet) starts it with PORT_DEFAULT (the port to listen
// on), RIVET_API_ENDPOINT and RIVET_TOKEN (this lobby's token for the matchmaker API).
import { WebSocketServer } from 'ws';

const api = process.env.RIVET_API_ENDPOINT;
const lobbyToken = process.env.RIVET_TOKEN;
const port = Number(process.env.PORT_DEFAULT ?? 3000);

/** A call to the matchmaker API as this lobby. */
const matchmaker = (path, body) =>
  fetch(`${api}/matchmaker/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${lobbyToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const room = new WebSocketServer({ port });

room.on('connection', async (socket, request) => {
  // The player token find gave this player: the matchmaker checks it and counts the player in.
  const playerToken = new URL(request.url, 'ws://lobby').searchParams.get('token') ?? '';
  const connected = await matchmaker('players/connected', { player_token: playerToken });
  if (!connected.ok) {
    socket.close(4001, 'unknown player');
    return;
  }
  socket.on('message', (data) => {
    for (const other of room.clients) if (other !== socket && other.readyState === other.OPEN) other.send(data.toString());
  });
  socket.on('close', () => void matchmaker('players/disconnected', { player_token: playerToken }));
});

room.on('listening', async () => {
  // Ready: the matchmaker may now send players here.
  const ready = await matchmaker('lobbies/ready', {});
  console.log(`hello game listening on ${port}, lobby ready: ${ready.status}`);
});

process.on('SIGTERM', () => room.close(() => process.exit(0)));
