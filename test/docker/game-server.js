// A small game server for Tavern's Docker tests, run by the host's `node` inside an image built
// FROM scratch (test/docker/images.ts). It does what a game server on Tavern must do, and a few
// things tests need it to do on command:
//
// - listens for UDP on $PORT_<GAME_UDP_LABEL> and TCP on $PORT_<GAME_TCP_LABEL> (labels `udp` and
//   `tcp` by default; upper-cased, `-` → `_`, as Tavern names them), echoing what it receives;
// - then calls `POST $RIVET_API_ENDPOINT/matchmaker/lobbies/ready` with `Authorization: Bearer
//   $RIVET_TOKEN` (unless GAME_READY=0);
// - on a line (TCP) or datagram (UDP) `connect <player_token>` / `disconnect <player_token>` calls
//   `players/connected` / `players/disconnected` and answers `connected <token>` (or the failure);
//   `close` / `open` calls `PUT lobbies/closed` and answers `closed` / `opend`;
//   `crash <code>` exits with that code; `oom` allocates until killed; `log <text>` / `err <text>`
//   print a line on stdout / stderr; `spam <n>` prints n lines;
// - GAME_EXIT_AT_START=<code> exits at once (a game that crashes at start);
// - SIGTERM: says so and exits 0 (or ignores it with GAME_IGNORE_SIGTERM set).
// It writes nothing to disk, so it runs on a read-only root filesystem as any user.
import { Buffer } from 'node:buffer';
import { createSocket } from 'node:dgram';
import { request } from 'node:http';
import { createServer } from 'node:net';
import process from 'node:process';
import { URL } from 'node:url';

const env = process.env;
const portOf = (label) => env[`PORT_${label.replace(/-/g, '_').toUpperCase()}`];
const out = (line) => process.stdout.write(`${line}\n`);
const err = (line) => process.stderr.write(`${line}\n`);

if (env.GAME_EXIT_AT_START !== undefined) {
  err(`exiting at start with code ${env.GAME_EXIT_AT_START} (GAME_EXIT_AT_START)`);
  process.exit(Number(env.GAME_EXIT_AT_START));
}

/** Calls the matchmaker API with the lobby token (POST unless said); resolves to [status, body]. */
const api = (path, body, method = 'POST') => new Promise((resolve) => {
  const url = new URL(`${env.RIVET_API_ENDPOINT ?? ''}/matchmaker/${path}`);
  const data = Buffer.from(JSON.stringify(body));
  const req = request(url, {
    method,
    headers: { authorization: `Bearer ${env.RIVET_TOKEN ?? ''}`, 'content-type': 'application/json', 'content-length': data.length },
  }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => resolve([res.statusCode ?? 0, Buffer.concat(chunks).toString()]));
  });
  req.on('error', (e) => resolve([0, e.message]));
  req.end(data);
});

/** Runs one command; resolves to the answer to send back, if any. */
const command = async (text) => {
  const [word, arg = ''] = text.trim().split(/\s+/, 2);
  switch (word) {
    case 'connect':
    case 'disconnect': {
      const [status, body] = await api(`players/${word}ed`, { player_token: arg });
      if (status === 200) out(`player ${word}ed`);
      else err(`players/${word}ed failed: ${status} ${body}`);
      return status === 200 ? `${word}ed ${arg}` : `${word}-failed ${status}`;
    }
    case 'close':
    case 'open': {
      const [status, body] = await api('lobbies/closed', { is_closed: word === 'close' }, 'PUT');
      if (status !== 200) err(`lobbies/closed failed: ${status} ${body}`);
      return status === 200 ? `${word}d` : `${word}-failed ${status}`;
    }
    case 'crash':
      err(`crashing with exit code ${arg}`);
      process.exit(Number(arg));
      break;
    case 'oom': {
      err('allocating until killed');
      const hoard = [];
      for (;;) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1));
    }
    case 'log':
      out(text.trim().slice(4));
      return undefined;
    case 'err':
      err(text.trim().slice(4));
      return undefined;
    case 'spam':
      for (let i = 0; i < Number(arg); i += 1) out(`spam line ${i}`);
      return undefined;
    default:
      return undefined;
  }
};

const udpPort = portOf(env.GAME_UDP_LABEL ?? 'udp');
const tcpPort = portOf(env.GAME_TCP_LABEL ?? 'tcp');
if (udpPort === undefined && tcpPort === undefined) {
  err('no port to listen on: set PORT_<label> for GAME_UDP_LABEL or GAME_TCP_LABEL');
  process.exit(2);
}

const listening = [];
if (udpPort !== undefined) {
  const udp = createSocket('udp4');
  udp.on('message', (msg, from) => {
    udp.send(msg, from.port, from.address);
    void command(msg.toString()).then((answer) => answer && udp.send(`${answer}\n`, from.port, from.address));
  });
  listening.push(new Promise((resolve) => udp.bind(Number(udpPort), '0.0.0.0', resolve)));
}
if (tcpPort !== undefined) {
  const tcp = createServer((socket) => {
    let pending = '';
    socket.on('data', (data) => {
      socket.write(data);
      const lines = (pending + data.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) void command(line).then((answer) => answer && socket.write(`${answer}\n`));
    });
    socket.on('error', () => undefined);
  });
  listening.push(new Promise((resolve) => tcp.listen(Number(tcpPort), '0.0.0.0', resolve)));
}

process.on('SIGTERM', () => {
  if (env.GAME_IGNORE_SIGTERM !== undefined) {
    out('SIGTERM received, ignoring it (GAME_IGNORE_SIGTERM)');
    return;
  }
  out('SIGTERM received, exiting');
  process.exit(0);
});

await Promise.all(listening);
out(`game server listening: udp ${udpPort ?? '-'}, tcp ${tcpPort ?? '-'} (uid ${process.getuid?.() ?? '?'}, cwd ${process.cwd()})`);
err('game server stderr check');
if (env.GAME_READY !== '0') {
  const [status, body] = await api('lobbies/ready', {});
  if (status === 200) out('lobby ready');
  else err(`lobbies/ready failed: ${status} ${body}`);
}
