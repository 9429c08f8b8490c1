// A game server for the game proxy's Docker test, run by the host's `node` inside an image built
// FROM scratch (test/docker/images.ts): serves HTTP on $PORT_WEB (answering `lobby <RIVET_LOBBY_ID>
// <method> <path> host=<Host> xff=<X-Forwarded-For>`) and echoes every byte of a WebSocket upgrade,
// then calls `POST $RIVET_API_ENDPOINT/matchmaker/lobbies/ready` with its lobby token. With
// $PORT_RAW (a tcp_tls port: the game proxy terminates TLS), answers each chunk there with
// `lobby <RIVET_LOBBY_ID>:<chunk>` over plain TCP. SIGTERM: exit 0.
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import process from 'node:process';
import { URL } from 'node:url';

const env = process.env;
const server = createServer((req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end(`lobby ${env.RIVET_LOBBY_ID} ${req.method} ${req.url} host=${req.headers.host} xff=${req.headers['x-forwarded-for'] ?? ''}\n`);
});
server.on('upgrade', (req, socket) => {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key'] ?? ''}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.on('data', (chunk) => socket.write(chunk));
  socket.on('end', () => socket.end());
  socket.on('error', () => undefined);
});
server.listen(Number(env.PORT_WEB), () => {
  process.stdout.write(`lobby http server listening on ${env.PORT_WEB}\n`);
  const ready = request(new URL(`${env.RIVET_API_ENDPOINT ?? ''}/matchmaker/lobbies/ready`), {
    method: 'POST', headers: { authorization: `Bearer ${env.RIVET_TOKEN ?? ''}`, 'content-type': 'application/json', 'content-length': 2 },
  }, (res) => {
    res.resume();
    process.stdout.write(`lobbies/ready answered ${res.statusCode}\n`);
  });
  ready.on('error', (error) => process.stderr.write(`lobbies/ready failed: ${error.message}\n`));
  ready.end('{}');
});
if (env.PORT_RAW !== undefined) {
  createTcpServer((socket) => {
    socket.on('data', (chunk) => socket.write(`lobby ${env.RIVET_LOBBY_ID}:${chunk.toString()}`));
    socket.on('error', () => undefined);
  }).listen(Number(env.PORT_RAW));
}
process.on('SIGTERM', () => process.exit(0));
