/**
 * Colyseus 0.18 as an HTTP peer for the `http` benchmark (its own package: ../../colyseus.ts): this file is the program of a child
 * process (`node colyseus-http.js --room lobby --max-clients 256`), a real single-process Colyseus server.
 *
 * Setup follows Colyseus's own `Server`: `new Server({ transport: new WebSocketTransport() })`
 * (default local presence and local driver), one room type `lobby`, `listen()` on 127.0.0.1. On
 * `listen()` Colyseus binds its default router to the transport's `node:http` server, which serves
 * `POST /matchmake/joinOrCreate/lobby`: `matchMaker.joinOrCreate` (find the room, create one when
 * none fits, reserve a seat) answered with the seat reservation as JSON.
 *
 * Seats are held as long as a Tavern seat is held (2 min, Tavern's connect window), so neither side
 * frees seats during a run. Once listening it prints one line `{"port":<n>}` on stdout; SIGTERM
 * shuts it down gracefully (Colyseus's own handler), which also lets `--cpu-prof` write its profile.
 */
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { Room, Server } from '@colyseus/core';
import { silentLogger } from './matchmaker.js';
import { WebSocketTransport } from '@colyseus/ws-transport';

/** How long a reserved seat is held (seconds): Tavern's 2-minute connect window. */
const SEAT_HOLD_SECONDS = 120;

const argValue = (args: readonly string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

/** Starts the server; resolves with the port it listens on. */
export async function serveColyseus(room: string, maxClients: number, host = '127.0.0.1', port = 0): Promise<number> {
  /** A lobby: no state to sync (no patch timer), seats held for the run. */
  class LobbyRoom extends Room {
    override maxClients = maxClients;
    override patchRate: number | null = null;
    override seatReservationTimeout = SEAT_HOLD_SECONDS;
  }
  const transport = new WebSocketTransport();
  const server = new Server({ transport, greet: false, logger: silentLogger });
  server.define(room, LobbyRoom);
  await server.listen(port, host);
  const address = transport.server?.address() as AddressInfo | null | undefined;
  if (address === null || address === undefined) throw new Error('the Colyseus transport has no listening server');
  return address.port;
}

const main = async (): Promise<void> => {
  const args = process.argv.slice(2);
  const maxClients = Number(argValue(args, '--max-clients') ?? 256);
  if (!Number.isInteger(maxClients) || maxClients < 1) throw new Error(`--max-clients must be a positive integer, got ${maxClients}`);
  const room = argValue(args, '--room') ?? 'lobby';
  const port = await serveColyseus(room, maxClients, argValue(args, '--host') ?? '127.0.0.1', Number(argValue(args, '--port') ?? 0));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`colyseus-http: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
