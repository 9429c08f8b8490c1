/**
 * Which test Swarm a process may build: one of a few slots, each with its own names and subnet
 * (see network.ts), held through an abstract Unix socket that only one process can bind and that
 * the kernel frees when the process ends, however it ends. A slot that can be taken belongs to no
 * live run, so whatever carries its names is a killed run's leftover and may be removed. Test
 * helpers.
 */
import { createServer, type Server } from 'node:net';

/** How many clusters may run on one machine at once. */
export const SLOTS = 4;

/** A slot this process holds until it calls `release`. */
export interface Slot {
  readonly index: number;
  release(): Promise<void>;
}

const take = (index: number): Promise<Server | undefined> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(undefined) : reject(e)));
    server.listen({ path: `\0tavern-swarm-slot-${index}` }, () => resolve(server.unref()));
  });

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/**
 * Takes the first free slot and hands it to `clean` (while held, so no other process starts a
 * cluster there meanwhile), which removes a killed run's leftovers under its names. Only the slot
 * taken is held, even for a moment: holding the others to clean them too made a process starting
 * at the same time find every slot held. Rejects when every slot is held by a live process.
 *
 * @example
 * const slot = await takeSlot((index) => teardown(layout(index))); // slot.index: 0
 */
export const takeSlot = async (clean: (index: number) => Promise<void>): Promise<Slot> => {
  for (let index = 0; index < SLOTS; index += 1) {
    const server = await take(index);
    if (server === undefined) continue;
    try {
      await clean(index);
    } catch (e) {
      await close(server);
      throw e;
    }
    return { index, release: () => close(server) };
  }
  throw new Error(`all ${SLOTS} Swarm test slots are held by other running processes`);
};
