// A lobby stand-in for the game proxy tests: an HTTP server per port given on the command line
// (127.0.0.1), answering `<name> <method> <path> host=<Host> xff=<X-Forwarded-For>` and, on a
// WebSocket upgrade, 101 then an echo of every byte. `/slow?ms=N` answers after N ms; `/hold`
// answers once `/release` is asked (of the same port), and `/held` answers how many wait so. Prints
// `ready` once every port listens. `/connections` answers how many connections the port accepted.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { URL } from 'node:url';

const ports = process.argv.slice(2).map(Number);
let listening = 0;
for (const port of ports) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const reply = () => {
      res.setHeader('content-type', 'text/plain');
      res.end(`up-${port} ${req.method} ${req.url} host=${req.headers.host} xff=${req.headers['x-forwarded-for'] ?? ''} proto=${req.headers['x-forwarded-proto'] ?? ''}\n`);
    };
    if (url.pathname === '/connections') res.end(`${connections}\n`);
    else if (url.pathname === '/slow') setTimeout(reply, Number(url.searchParams.get('ms') ?? 1000));
    else if (url.pathname === '/hold') held.push(reply);
    else if (url.pathname === '/held') res.end(`${held.length}\n`);
    else if (url.pathname === '/release') {
      for (const answer of held.splice(0)) answer();
      res.end('released\n');
    }
    else if (url.pathname === '/status') { res.statusCode = Number(url.searchParams.get('code') ?? 500); res.end('status\n'); }
    else reply();
  });
  server.keepAliveTimeout = 60_000;
  let connections = 0;
  const held = [];
  server.on('connection', () => (connections += 1));
  server.on('upgrade', (req, socket) => {
    const key = req.headers['sec-websocket-key'] ?? '';
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.on('data', (chunk) => socket.write(chunk));
    socket.on('end', () => socket.end());
    socket.on('error', () => undefined);
  });
  server.listen(port, '127.0.0.1', () => {
    listening += 1;
    if (listening === ports.length) process.stdout.write('ready\n');
  });
}
