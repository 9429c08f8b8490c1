// A game server for the Swarm server test, run by the host's `node` inside an image built FROM
// scratch (test/docker/images.ts): answers HTTP on $PORT_WEB (`lobby <RIVET_LOBBY_ID> <path>`),
// echoes TCP on $PORT_TCP and UDP datagrams on $PORT_UDP (each prefixed `lobby <id>:`), then calls
// `POST $RIVET_API_ENDPOINT/matchmaker/lobbies/ready` with its lobby token (again after a failure,
// every second). SIGTERM: exit 0.
import { createSocket } from 'node:dgram';
import { createServer, request } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { URL } from 'node:url';

const env = process.env;
const id = env.RIVET_LOBBY_ID;
createServer((req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end(`lobby ${id} ${req.url}\n`);
}).listen(Number(env.PORT_WEB));
createTcpServer((socket) => {
  socket.on('data', (chunk) => socket.write(`lobby ${id}:${chunk.toString()}`));
  socket.on('error', () => undefined);
}).listen(Number(env.PORT_TCP));
const udp = createSocket('udp4');
udp.on('message', (msg, from) => udp.send(`lobby ${id}:${msg.toString()}`, from.port, from.address));
udp.bind(Number(env.PORT_UDP));

const ready = () => {
  const req = request(new URL(`${env.RIVET_API_ENDPOINT ?? ''}/matchmaker/lobbies/ready`), {
    method: 'POST', headers: { authorization: `Bearer ${env.RIVET_TOKEN ?? ''}`, 'content-type': 'application/json', 'content-length': 2 },
  }, (res) => {
    res.resume();
    process.stdout.write(`lobbies/ready answered ${res.statusCode}\n`);
    if (res.statusCode !== 200) setTimeout(ready, 1_000);
  });
  req.on('error', (error) => {
    process.stderr.write(`lobbies/ready failed: ${error.message}\n`);
    setTimeout(ready, 1_000);
  });
  req.end('{}');
};
ready();
process.on('SIGTERM', () => process.exit(0));
