/**
 * The floor of a find over HTTP in Node, for the `http` benchmark: this file is the program of a
 * child process (`node bare-http.js <answer>`), a bare `node:http` server that reads each
 * request's body and answers `200` with `<answer>` (a JSON text: Tavern's own answer to a find,
 * so the same bytes) and no other work: no routing, token, matchmaking, storage or recording.
 * The gap between this server and Tavern is what Tavern's find costs above Node's own HTTP.
 *
 * Prints `{"port":<n>}` once listening; SIGTERM closes it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const answer = process.argv[2];
if (answer === undefined) throw new Error('usage: bare-http.js <answer JSON>');
const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(answer)) };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => res.writeHead(200, headers).end(answer));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.once('SIGTERM', () => {
  server.close();
  server.closeIdleConnections();
});
