import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  inBatches, parseRouteKey, PROTOS, routeChanges, routeKey, routeSteps, slotsForStart, startingRoutes, type Proto, type RouteMaps,
} from '../../../src/adapters/haproxy/diff.js';
import { SlotTable } from '../../../src/adapters/haproxy/slots.js';
import { HaproxyModel } from './haproxy-model.js';

const FILES: Readonly<Record<Proto, string>> = { http: '/p/routes-http.map', https: '/p/routes-https.map' };
const HOSTS = ['a.lobby.x', 'b.lobby.x', 'c.lobby.x', 'd.lobby.x', 'e.lobby.x'];
const IPS = ['127.0.0.1', '10.0.0.2', '::1', 'fd00::5'];

type Maps = Record<Proto, Map<string, string>>;
type Addr = readonly [ip: string, port: number];

/** A desired state: per map, some hostnames, each at an address (as the proxy writes it: `<ip>:<port>`, IPv6 bare). */
const desiredState: fc.Arbitrary<Record<Proto, ReadonlyMap<string, Addr>>> = fc.record({
  http: fc.dictionary(fc.constantFrom(...HOSTS), fc.tuple(fc.constantFrom(...IPS), fc.integer({ min: 20_000, max: 20_003 }))),
  https: fc.dictionary(fc.constantFrom(...HOSTS), fc.tuple(fc.constantFrom(...IPS), fc.integer({ min: 20_000, max: 20_003 }))),
}).map((d) => ({ http: new Map(Object.entries(d.http)), https: new Map(Object.entries(d.https)) }));

const asMaps = (d: Record<Proto, ReadonlyMap<string, Addr>>): Maps => ({
  http: new Map([...d.http].map(([h, [ip, port]]) => [h, `${ip}:${port}`])),
  https: new Map([...d.https].map(([h, [ip, port]]) => [h, `${ip}:${port}`])),
});

const allKeys = PROTOS.flatMap((p) => HOSTS.map((h) => routeKey(p, h)));

/** The proxy's state between syncs: what it wants, what HAProxy holds (the model), what it knows HAProxy holds, the slots. */
interface World {
  desired: Maps;
  applied: Maps;
  readonly table: SlotTable;
  model: HaproxyModel;
}

/** A start as `HaproxyGameProxy.#launch` does it: slots for the wanted routes, HAProxy started on the files. */
const launch = (w: World): string[] => {
  const refused = slotsForStart(w.table, w.desired);
  const start = startingRoutes(w.desired, w.table.held(), w.table.size);
  w.model = new HaproxyModel({ [FILES.http]: start.maps.http, [FILES.https]: start.maps.https }, start.slots);
  w.applied = start.written;
  return refused;
};

/**
 * A sync as `HaproxyGameProxy.#apply` does it, every command run on the model; after each one,
 * every mapped hostname reaches a ready server at its address before or after the change, and no
 * two hostnames share a slot.
 */
const sync = (w: World, keys: Iterable<string>, batchBytes: number): string[] => {
  const before: RouteMaps = { http: new Map(w.applied.http), https: new Map(w.applied.https) };
  const { steps, refused } = routeSteps(routeChanges(w.desired, w.applied, keys), w.table, FILES);
  for (const batch of inBatches(steps, batchBytes)) {
    for (const command of batch.flatMap((s) => s.commands)) {
      w.model.run(command);
      const problem = unsafe(w, before);
      if (problem !== undefined) throw new Error(`after '${command}': ${problem}`);
    }
    for (const { change } of batch) {
      if (change.want !== undefined) w.applied[change.proto].set(change.host, change.want);
      else {
        w.applied[change.proto].delete(change.host);
        w.table.release(change.key);
      }
    }
  }
  return refused;
};

/** Where the model sends a mapped hostname that it should not: a slot not ready, an address neither before nor after, a slot two hostnames share. */
const unsafe = (w: World, before: RouteMaps): string | undefined => {
  const slots = new Set<number>();
  for (const proto of PROTOS) {
    for (const host of w.model.maps.get(FILES[proto])?.keys() ?? []) {
      const to = w.model.route(FILES[proto], host);
      const at = `${to?.server?.ip ?? ''}:${to?.server?.port ?? ''}`;
      if (to?.server?.ready !== true) return `${proto} ${host} is mapped to slot ${to?.slot} before it is ready`;
      if (at !== before[proto].get(host) && at !== w.desired[proto].get(host)) return `${proto} ${host} is sent to ${at}`;
      if (slots.has(to.slot)) return `slot ${to.slot} serves two routes`;
      slots.add(to.slot);
    }
  }
  return undefined;
};

/** What HAProxy serves: per map, hostname → the address of its slot's server (ready ones). */
const served = (model: HaproxyModel): Maps => {
  const out: Maps = { http: new Map(), https: new Map() };
  for (const proto of PROTOS) {
    for (const host of model.maps.get(FILES[proto])?.keys() ?? []) {
      const s = model.route(FILES[proto], host)?.server;
      if (s?.ready === true) out[proto].set(host, `${s.ip}:${s.port}`);
    }
  }
  return out;
};

/** The desired routes that hold a slot. */
const slotted = (w: World): Maps => ({
  http: new Map([...w.desired.http].filter(([h]) => w.table.slotOf(routeKey('http', h)) !== undefined)),
  https: new Map([...w.desired.https].filter(([h]) => w.table.slotOf(routeKey('https', h)) !== undefined)),
});

/** One round: a new desired state, the keys the proxy marked (every changed one, maybe more), a sync or a restart. */
const round = fc.record({ desired: desiredState, extra: fc.subarray(allKeys), restart: fc.boolean() });

describe('the desired/applied diff', () => {
  it('turns what HAProxy holds into what is wanted: after each sync HAProxy serves exactly the desired routes, and never sends a request to another lobby on the way', () => {
    fc.assert(
      fc.property(fc.array(round, { minLength: 1, maxLength: 8 }), fc.integer({ min: 40, max: 400 }), (rounds, batchBytes) => {
        const w: World = { desired: { http: new Map(), https: new Map() }, applied: { http: new Map(), https: new Map() }, table: new SlotTable(HOSTS.length * 2), model: new HaproxyModel({}, []) };
        launch(w);
        for (const r of rounds) {
          const next = asMaps(r.desired);
          const changed = allKeys.filter((k) => {
            const [p, h] = parseRouteKey(k);
            return next[p].get(h) !== w.desired[p].get(h);
          });
          w.desired = next;
          if (r.restart) launch(w);
          else sync(w, new Set([...changed, ...r.extra]), batchBytes);
          expect(served(w.model)).toEqual(w.desired);
          expect(w.applied).toEqual(w.desired);
          expect([...w.table.held().keys()].sort()).toEqual(PROTOS.flatMap((p) => [...w.desired[p].keys()].map((h) => routeKey(p, h))).sort());
        }
      }),
    );
  });

  it('with too few slots, serves the desired routes that got one and no other, and names every other one refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.array(round, { minLength: 1, maxLength: 8 }), (size, rounds) => {
        const w: World = { desired: { http: new Map(), https: new Map() }, applied: { http: new Map(), https: new Map() }, table: new SlotTable(size), model: new HaproxyModel({}, []) };
        launch(w);
        for (const r of rounds) {
          w.desired = asMaps(r.desired);
          const refused = r.restart ? launch(w) : sync(w, allKeys, 8_000);
          expect(served(w.model)).toEqual(slotted(w));
          expect(w.table.held().size).toBeLessThanOrEqual(size);
          const unslotted = PROTOS.flatMap((p) => [...w.desired[p].keys()].map((h) => routeKey(p, h))).filter((k) => w.table.slotOf(k) === undefined);
          expect(refused.sort()).toEqual(unslotted.sort());
        }
      }),
    );
  });

  it('lists only the routes that differ, in the order given', () => {
    fc.assert(
      fc.property(desiredState, desiredState, fc.shuffledSubarray(allKeys), (d, a, keys) => {
        const desired = asMaps(d);
        const applied = asMaps(a);
        const changes = routeChanges(desired, applied, keys);
        expect(changes.map((c) => c.key)).toEqual(keys.filter((k) => {
          const [p, h] = parseRouteKey(k);
          return desired[p].get(h) !== applied[p].get(h);
        }));
        for (const c of changes) expect([c.want, c.have]).toEqual([desired[c.proto].get(c.host), applied[c.proto].get(c.host)]);
      }),
    );
  });
});

describe('inBatches', () => {
  const steps = fc.array(fc.record({ commands: fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 }) }), { maxLength: 30 });
  const bytes = (batch: ReadonlyArray<{ readonly commands: readonly string[] }>): number => batch.flatMap((s) => s.commands).reduce((n, c) => n + c.length + 1, 0);

  it('keeps every step whole and in order, fills each run greedily, and exceeds the limit only with a step alone', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 1, max: 80 }), (all, max) => {
        const batches = inBatches(all, max);
        expect(batches.flat()).toEqual(all);
        for (const [i, batch] of batches.entries()) {
          expect(batch.length).toBeGreaterThan(0);
          if (batch.length > 1) expect(bytes(batch)).toBeLessThanOrEqual(max);
          const next = batches[i + 1]?.[0];
          if (next !== undefined) expect(bytes([...batch, next])).toBeGreaterThan(max);
        }
      }),
    );
  });
});
