/**
 * A recorded demand made up deterministically, as the recorder would have stored it: finds of one
 * game mode in one region arriving with a daily cycle around a mean CCU, parties of 1–4, sessions
 * of tens of minutes, a few no-shows, and lobbies started a few seconds after their first seat.
 * Written a minute at a time in time order (the stores read chunks in order), so it holds only the
 * facts still to come. The deploy preview's benchmark and tests replay it.
 */
import type { DemandFact, DemandStore } from '../src/io/demand.js';
import { createStream, sample, type Stream } from '../src/core/distribution.js';

export interface RecordingSpec {
  readonly namespaceId: string;
  /** Epoch ms of the first minute. */
  readonly start: number;
  readonly minutes: number;
  /** Mean connected players over a day. */
  readonly ccu: number;
  readonly gameMode: string;
  readonly region: string;
  readonly seed: number;
  /** Players per lobby the recording's lobbies were started for (its lobby facts). */
  readonly lobbySize?: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SESSION = { kind: 'lognormal', median: 20 * MINUTE, p95: 60 * MINUTE } as const;
/** The lognormal's mean: median · e^(σ²/2). */
const MEAN_SESSION = 20 * MINUTE * Math.exp(((Math.log(3) / 1.6448536269514722) ** 2) / 2);
const PARTIES = [1, 1, 1, 1, 1, 1, 1, 2, 2, 4] as const;

const hex = (stream: Stream): string => Array.from({ length: 3 }, () => stream.int(0x1_0000_0000).toString(16).padStart(8, '0')).join('');

/** Poisson arrivals in one minute at `rate` per minute. */
const poisson = (rate: number, stream: Stream): number => {
  let n = 0;
  for (let t = -Math.log(1 - stream.float()) / rate; t < 1; t += -Math.log(1 - stream.float()) / rate) n += 1;
  return n;
};

/**
 * Appends the recording to `store`; returns how many requests it holds.
 *
 * @example
 * await writeRecording(store, { namespaceId, start: now - 86_400_000, minutes: 1440, ccu: 1000, gameMode: 'default', region: 'local', seed: 1 });
 */
export async function writeRecording(store: DemandStore, spec: RecordingSpec): Promise<number> {
  const stream = createStream(spec.seed);
  const later = new Map<number, DemandFact[]>();
  let facts: DemandFact[] = [];
  let current = 0;
  const due = (at: number, fact: DemandFact): void => {
    const minute = Math.floor((at - spec.start) / MINUTE);
    if (minute <= current) return void facts.push(fact);
    const list = later.get(minute) ?? [];
    list.push(fact);
    later.set(minute, list);
  };
  const base = { namespaceId: spec.namespaceId };
  const lobbySize = spec.lobbySize ?? 8;
  let requests = 0;
  let seatsInLobby = lobbySize;
  let lobbies = 0;
  const end = spec.minutes;
  for (let minute = 0; minute < end; minute++) {
    const t0 = spec.start + minute * MINUTE;
    const cycle = 1 + 0.5 * Math.sin((2 * Math.PI * (minute * MINUTE)) / DAY);
    const players = (spec.ccu * cycle * MINUTE) / MEAN_SESSION;
    current = minute;
    facts = later.get(minute) ?? [];
    later.delete(minute);
    for (let i = poisson(players / 1.5, stream); i > 0; i--) {
      const at = t0 + stream.int(MINUTE);
      const party = PARTIES[stream.int(PARTIES.length)] ?? 1;
      const seats = Array.from({ length: party }, () => hex(stream));
      if (seatsInLobby + party > lobbySize) {
        seatsInLobby = 0;
        lobbies += 1;
        const lobbyId = `lobby-${lobbies}`;
        const ready = at + Math.round(sample({ kind: 'lognormal', median: 2_500, p95: 6_000 }, stream));
        facts.push({ ...base, type: 'lobby', at, lobbyId, step: 'created', gameMode: spec.gameMode, region: spec.region });
        due(ready, { ...base, type: 'lobby', at: ready, lobbyId, step: 'ready' });
        due(ready + 40 * MINUTE, { ...base, type: 'lobby', at: ready + 40 * MINUTE, lobbyId, step: 'stopped', reason: 'idle', failed: false });
      }
      seatsInLobby += party;
      const waitMs = seatsInLobby === party ? 2_500 : 5 + stream.int(20);
      facts.push({ ...base, type: 'request', at, kind: 'find', gameMode: spec.gameMode, region: spec.region, party, outcome: 'ok', waitMs, seatReady: seatsInLobby !== party, seats });
      const session = Math.max(1_000, Math.round(sample(SESSION, stream)));
      const connected = at + waitMs + 500 + stream.int(1_500);
      for (const seat of seats) {
        if (stream.float() < 0.03) {
          due(at + waitMs + 60_000, { ...base, type: 'seat', at: at + waitMs + 60_000, seat, step: 'removed' });
          continue;
        }
        due(connected, { ...base, type: 'seat', at: connected, seat, step: 'connected' });
        due(connected + session, { ...base, type: 'seat', at: connected + session, seat, step: 'removed' });
      }
      requests += 1;
    }
    facts.sort((a, b) => a.at - b.at);
    await store.appendDemand(facts);
  }
  return requests;
}
