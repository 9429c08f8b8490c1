/**
 * When another process has read what a test sent it over TCP: the kernel's queues of the
 * connection (Linux `/proc/net/tcp`), so a test can act once a server has a request in hand
 * instead of sleeping and hoping it has.
 */
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { eventually } from './wait.js';

/** `127.0.0.1:8080` as `/proc/net/tcp` writes it (`0100007F:1F90`): the address's bytes in host (little-endian) order. */
const procAddress = (address: string | undefined, port: number | undefined): string => {
  const bytes = (address ?? '').split('.').map(Number);
  if (bytes.length !== 4 || port === undefined) throw new Error(`an IPv4 connection is needed, not ${address ?? '?'}:${port ?? '?'}`);
  const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');
  return `${bytes.reverse().map((b) => hex(b, 2)).join('')}:${hex(port, 4)}`;
};

/** `tx_queue:rx_queue` of each connection, by `local remote`. */
const queues = async (): Promise<Map<string, { tx: number; rx: number }>> => {
  const rows = (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1);
  const out = new Map<string, { tx: number; rx: number }>();
  for (const row of rows) {
    const [, local, remote, , queue] = row.trim().split(/\s+/);
    const [tx, rx] = (queue ?? '').split(':');
    if (local !== undefined && remote !== undefined && tx !== undefined && rx !== undefined) out.set(`${local} ${remote}`, { tx: parseInt(tx, 16), rx: parseInt(rx, 16) });
  }
  return out;
};

/**
 * Resolves once the process at the other end of `socket` (on this machine) has read every byte
 * `socket` sent: nothing is left in Node's buffer, none unacknowledged in ours, none unread in the
 * peer's receive queue.
 *
 * @example
 * req.end(); await once(req, 'finish'); await readByPeer(req.socket, 'the server read the long poll');
 */
export async function readByPeer(socket: Socket, what: string): Promise<void> {
  const local = procAddress(socket.localAddress, socket.localPort);
  const remote = procAddress(socket.remoteAddress, socket.remotePort);
  await eventually(what, async () => {
    if (socket.writableLength > 0) return false;
    const all = await queues();
    const mine = all.get(`${local} ${remote}`);
    const peer = all.get(`${remote} ${local}`);
    return mine?.tx === 0 && peer?.rx === 0;
  }, { everyMs: 10 });
}
