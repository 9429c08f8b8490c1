/**
 * Colyseus 0.18 as an in-process routing peer for the routing benchmark.
 *
 * One matchmaker per process: Colyseus keeps its matchmaker in module-level singletons, so only one
 * peer may be open at a time; `close()` it before creating the next one.
 *
 * Setup follows a real single-process server: `matchMaker.setup()` with the default local presence
 * and local driver, `matchMaker.accept()` (what `Server.listen()` calls), one room type per routing
 * name, rooms made with `matchMaker.createRoom()`, seats taken with the matchmaker's own reservation
 * call, closed lobbies locked with `room.lock()`.
 *
 * @example
 * const peer = await createColyseusPeer({ rooms: 1000, maxClients: 16, fullShare: 0.3, lockedShare: 0.1, roomNames });
 * await peer.choose();  // matchMaker.findOneRoomAvailable(name, {})
 * await peer.commit();  // matchMaker.joinOrCreate(name, {})
 * await peer.close();
 */
import { getHeapStatistics } from 'node:v8';
import { LocalDriver, LocalPresence, Room, generateId, matchMaker } from '@colyseus/core';
import type { IRoomCache } from '@colyseus/core';
import { logger, setLogger } from '@colyseus/core/Logger';
import type { Logger } from '@colyseus/core/Logger';

export interface ColyseusPeer {
  /** The routing choice alone: which room would a player go to (read-only as far as Colyseus allows). */
  choose(): Promise<unknown>;
  /** The choice committed: a seat reserved in the chosen (or a newly created) room. */
  commit(): Promise<unknown>;
  /** Number of rooms currently registered. */
  rooms(): number;
  close(): Promise<void>;
}

export interface ColyseusPeerOptions {
  rooms: number;
  maxClients: number;
  /** Fraction of rooms filled to `maxClients` with real seat reservations (Colyseus then locks them itself). */
  fullShare: number;
  /** Fraction of rooms locked with `room.lock()` (closed lobbies); they hold a partial count of players. */
  lockedShare: number;
  roomNames: readonly string[];
  /** Give up (after shutting Colyseus down) if setting up takes longer than this. No limit by default. */
  deadlineMs?: number;
  /** Seed of the deterministic layout (which rooms are full, locked, how many players). Default 1. */
  seed?: number;
}

/**
 * Reserved seats stand for connected players, so they must not expire during a run. Node caps
 * timers at 2^31-1 ms (about 24.8 days); one day is well within it.
 */
const SEAT_HOLD_SECONDS = 24 * 60 * 60;

/** Colyseus's logger, silenced (both peers). */
export const silentLogger: Logger = {
  debug: () => undefined,
  error: () => undefined,
  info: () => undefined,
  trace: () => undefined,
  warn: () => undefined,
};

let open = false;

/** mulberry32: a small deterministic PRNG, so every run lays the rooms out the same way. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PARTIAL = 0;
const FULL = 1;
const LOCKED = 2;

/** Exactly round(n·share) full and locked rooms, scattered over the creation order by a seeded shuffle. */
function layout(n: number, fullShare: number, lockedShare: number, random: () => number): Uint8Array {
  const full = Math.min(n, Math.round(n * fullShare));
  const locked = Math.min(n - full, Math.round(n * lockedShare));
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = order[i] ?? i;
    order[i] = order[j] ?? j;
    order[j] = t;
  }
  const kinds = new Uint8Array(n).fill(PARTIAL);
  for (let k = 0; k < full + locked; k++) kinds[order[k] ?? k] = k < full ? FULL : LOCKED;
  return kinds;
}

function validate(opts: ColyseusPeerOptions): void {
  const { rooms, maxClients, fullShare, lockedShare, roomNames } = opts;
  if (!Number.isInteger(rooms) || rooms < 0) throw new RangeError(`rooms must be a non-negative integer, got ${rooms}`);
  if (!Number.isInteger(maxClients) || maxClients < 1) throw new RangeError(`maxClients must be a positive integer, got ${maxClients}`);
  for (const [name, share] of [['fullShare', fullShare], ['lockedShare', lockedShare]] as const) {
    if (!(share >= 0 && share <= 1)) throw new RangeError(`${name} must lie in [0, 1], got ${share}`);
  }
  if (roomNames.length === 0) throw new RangeError('roomNames must not be empty');
  if (new Set(roomNames).size !== roomNames.length) throw new RangeError('roomNames must be distinct');
}

/** Throws a clear error when setup runs past its deadline or towards the V8 heap limit (about 16-19 KB per room). */
function checkLimits(created: number, opts: ColyseusPeerOptions, started: number, deadline: number, heapLimit: number): void {
  const elapsed = Math.round(performance.now() - started);
  if (performance.now() > deadline) {
    throw new Error(`Colyseus setup exceeded its deadline of ${opts.deadlineMs} ms after ${elapsed} ms: ${created} of ${opts.rooms} rooms created`);
  }
  const used = getHeapStatistics().used_heap_size;
  if (used > 0.85 * heapLimit) {
    const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
    throw new Error(`Colyseus setup stopped near the V8 heap limit (${mb(used)} of ${mb(heapLimit)} MB) after ${elapsed} ms: ${created} of ${opts.rooms} rooms created; raise --max-old-space-size`);
  }
}

export async function createColyseusPeer(opts: ColyseusPeerOptions): Promise<ColyseusPeer> {
  validate(opts);
  if (open) throw new Error('a Colyseus peer is already open: close() it first (Colyseus keeps one matchmaker per process)');
  open = true;

  const { maxClients, roomNames } = opts;
  const started = performance.now();
  const previousLogger = logger;
  setLogger(silentLogger);

  const presence = new LocalPresence();
  const driver = new LocalDriver();
  /** Every room instance this peer created (including those joinOrCreate creates), for teardown. */
  const live = new Set<Room>();

  /** A lobby: no state to sync (patchRate null: no 20 Hz patch timer per room), seats held for the run. */
  class LobbyRoom extends Room {
    override maxClients = maxClients;
    override patchRate: number | null = null;
    override seatReservationTimeout = SEAT_HOLD_SECONDS;
    override onCreate(): void {
      live.add(this);
    }
  }

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      // The local driver removes a listing with a linear findIndex, once in disconnect() and once
      // in disposeRoom(): O(rooms²) at shutdown. The listings are being dropped anyway; empty the list first.
      driver.clear();
      await matchMaker.gracefullyShutdown();
    } finally {
      // Room disposal leaves seat-reservation timers running (they would hold the process for a day).
      for (const room of live) {
        const { _reservedSeatTimeouts: timers } = room as unknown as { _reservedSeatTimeouts: Record<string, NodeJS.Timeout> };
        for (const timer of Object.values(timers)) clearTimeout(timer);
      }
      live.clear();
      // Presence key expiries (joinOrCreate's concurrency counter) and the pending stats write.
      const { timeouts } = presence as unknown as { timeouts: Record<string, NodeJS.Timeout> };
      for (const timer of Object.values(timeouts)) clearTimeout(timer);
      matchMaker.stats.reset();
      for (const name of roomNames) matchMaker.removeRoomType(name);
      setLogger(previousLogger);
      open = false;
    }
  };

  try {
    await matchMaker.setup(presence, driver);
    for (const name of roomNames) matchMaker.defineRoomType(name, LobbyRoom);
    await matchMaker.accept();

    const random = seededRandom(opts.seed ?? 1);
    const kinds = layout(opts.rooms, opts.fullShare, opts.lockedShare, random);
    const deadline = opts.deadlineMs === undefined ? Infinity : started + opts.deadlineMs;

    const heapLimit = getHeapStatistics().heap_size_limit;

    for (let i = 0; i < opts.rooms; i++) {
      if ((i & 1023) === 0) checkLimits(i, opts, started, deadline, heapLimit);
      const listing = await matchMaker.createRoom(roomNames[i % roomNames.length] ?? '', {});
      const kind = kinds[i];
      const seats = kind === FULL ? maxClients : Math.floor(random() * maxClients);
      if (seats > 0) {
        const clients = Array.from({ length: seats }, () => ({ sessionId: generateId(), options: {}, auth: undefined }));
        await matchMaker.reserveMultipleSeatsFor(listing, clients);
      }
      if (kind === LOCKED) await matchMaker.getLocalRoomById(listing.roomId).lock();
    }
  } catch (error) {
    await close();
    throw error;
  }

  let turn = 0;
  const nextName = (): string => roomNames[turn++ % roomNames.length] ?? '';

  return {
    choose: (): Promise<IRoomCache | undefined> => matchMaker.findOneRoomAvailable(nextName(), {}),
    commit: () => matchMaker.joinOrCreate(nextName(), {}),
    rooms: () => driver.rooms.length,
    close,
  };
}
