/**
 * Recorded demand, persisted: what players asked the matchmaker for and what became of their seats
 * and lobbies, as small append-only facts per namespace. The export and the simulator's calibration
 * fold them (`src/services/demand.ts`). No client address is ever stored, and players appear only
 * by a keyed pseudonym of their id (`seat`), never by the id itself.
 */

/** Which gates a request went through before its answer. */
export interface DemandGates {
  readonly captcha: boolean;
  readonly verification: boolean;
}

/** One find, join or create, as answered. */
export interface DemandRequestFact {
  readonly type: 'request';
  readonly namespaceId: string;
  /** When the request arrived (epoch ms). */
  readonly at: number;
  readonly kind: 'find' | 'join' | 'create';
  /** The admitted lobby's game mode, else the one asked for (absent: a join to an unknown lobby). */
  readonly gameMode?: string;
  /** The admitted lobby's region, else the one asked for (absent: the request named none). */
  readonly region?: string;
  /** Players seated by the request (asked for, when refused). */
  readonly party: number;
  /** Absent: neither ran. */
  readonly gates?: DemandGates;
  /** `ok`, or the error code of the refusal. */
  readonly outcome: string;
  /** From arrival to the answer (a seat in a starting lobby waits for it to be ready). */
  readonly waitMs: number;
  /**
   * Admitted: whether its seat was ready at admission, so `waitMs` is the server's answer time alone
   * (no lobby start in it). Absent on a refusal, and on facts recorded before it was kept.
   */
  readonly seatReady?: boolean;
  /** The seats it reserved (each seat's session starts here), as keyed pseudonyms of their player ids. */
  readonly seats: readonly string[];
}

/** A later step of a seat's session (reserved by its request → connected → removed). */
export interface DemandSeatFact {
  readonly type: 'seat';
  readonly namespaceId: string;
  readonly at: number;
  /** A keyed pseudonym of the player id (its request's seat). */
  readonly seat: string;
  readonly step: 'connected' | 'removed';
}

/** A step of one lobby's life, with where it runs. */
export interface DemandLobbyFact {
  readonly type: 'lobby';
  readonly namespaceId: string;
  readonly at: number;
  readonly lobbyId: string;
  /**
   * `stopping`: asked to stop (from then on not active: it takes no players and no longer counts
   * against `lobby_count_max`); `stopped`: its container is gone (a Docker container takes a
   * fraction of a second to seconds between the two).
   */
  readonly step: 'created' | 'ready' | 'stopping' | 'stopped';
  /** Absent on a later fact of a lobby another instance created (its created fact has them). */
  readonly gameMode?: string;
  readonly region?: string;
  /** Stopping and stopped: why (`crashed`, `idle`, ...). */
  readonly reason?: string;
  /** Stopped: whether it stopped for a failure (crash, start failure, ready timeout). */
  readonly failed?: boolean;
}

export type DemandFact = DemandRequestFact | DemandSeatFact | DemandLobbyFact;

/** A stored fact and its position in the store's order (at, then seq). */
export interface StoredDemandFact {
  readonly seq: number;
  readonly fact: DemandFact;
}

/** Where a page of {@link DemandStore.readDemand} ended: pass it back to read on. */
export interface DemandCursor {
  readonly at: number;
  readonly seq: number;
}

/** The bytes of a seat key (a fact's seat is their hex: 24 digits). */
export const SEAT_KEY_BYTES = 12;

/** Numbers a request takes in {@link DemandRequestColumns}. */
export const REQUEST_NUMBERS = 9;

/** A request's flags in {@link DemandRequestColumns}: the gates that ran, and whether its seat was ready at admission (known, ready). */
export const REQUEST_FLAGS = { captcha: 1, verification: 2, seatReadinessKnown: 4, seatReady: 8 } as const;

/**
 * The index of `text` in a columns' `words`, added if new (`index` maps each word to its index);
 * −1 for none.
 */
export function wordIndex(words: string[], index: Map<string, number>, text: string | undefined): number {
  if (text === undefined) return -1;
  let w = index.get(text);
  if (w === undefined) {
    w = words.push(text) - 1;
    index.set(text, w);
  }
  return w;
}

/** A request's {@link REQUEST_FLAGS}, from the gates that ran and whether its seat was ready at admission. */
export const requestFlags = (gates: DemandGates | undefined, seatReady: boolean | undefined): number =>
  (gates?.captcha === true ? REQUEST_FLAGS.captcha : 0) | (gates?.verification === true ? REQUEST_FLAGS.verification : 0) |
  (seatReady === undefined ? 0 : REQUEST_FLAGS.seatReadinessKnown | (seatReady ? REQUEST_FLAGS.seatReady : 0));

/**
 * One namespace's requests as columns, as the recorder hands a flush over: no object per request,
 * and the SQL stores write it as a chunk as it is (`adapters/demand-chunks.ts`).
 */
export interface DemandRequestColumns {
  readonly namespaceId: string;
  /** The time the requests' times count from (epoch ms). */
  readonly base: number;
  /**
   * {@link REQUEST_NUMBERS} per request, in order: at − `base`, kind, game mode, region, party,
   * outcome, wait ms, seats, flags. Kind, game mode, region and outcome are indexes in `words`
   * (−1: none); seats is how many of `seats` are the request's; flags are {@link REQUEST_FLAGS}.
   */
  readonly numbers: readonly number[];
  readonly words: readonly string[];
  /** The requests' seat keys in order, {@link SEAT_KEY_BYTES} each (a fact's seat is their hex). */
  readonly seats: Uint8Array;
}

/**
 * @example
 * await store.appendDemand([{ type: 'seat', namespaceId, at: Date.now(), seat, step: 'connected' }]);
 * const page = await store.readDemand(namespaceId, { from: 0, to: Date.now() }, undefined, 1000);
 */
export interface DemandStore {
  /** Appends facts, and requests as columns (one commit; the facts come first in append order). */
  appendDemand(facts: readonly DemandFact[], requests?: readonly DemandRequestColumns[]): Promise<void>;
  /**
   * A namespace's facts with `from <= at < to`, ordered by time then by append order, after
   * `after` (exclusive), at most `limit`.
   */
  readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]>;
  /** Deletes every fact older than `before` (retention); returns how many. */
  pruneDemand(before: number): Promise<number>;
}
