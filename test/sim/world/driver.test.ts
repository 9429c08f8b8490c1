import { describe, expect, it } from 'vitest';
import { Simulation } from '../../../src/sim/engine/clock.js';
import { Driver } from '../../../src/sim/world/driver.js';

const setup = (end = 1_000) => {
  const sim = new Simulation<() => void>(0);
  const driver = new Driver(sim, end);
  return { sim, driver };
};

describe('Driver', () => {
  it('lets every task an event woke run to its end before the next event, even at the same time', async () => {
    const { sim, driver } = setup();
    const log: string[] = [];
    const task = async (name: string) => {
      log.push(`${name} starts`);
      await Promise.resolve();
      await Promise.resolve();
      log.push(`${name} ends`);
    };
    sim.schedule(10, () => driver.spawn(task('a')));
    sim.schedule(10, () => log.push('second event'));
    const result = await driver.run();
    expect(log).toEqual(['a starts', 'a ends', 'second event']);
    expect(result).toEqual({ events: 2, monotone: true });
  });

  it('moves time on while a task sleeps, and wakes it at its virtual time', async () => {
    const { sim, driver } = setup();
    const log: string[] = [];
    sim.schedule(5, () =>
      driver.spawn(
        (async () => {
          log.push(`sleep at ${sim.now()}`);
          await driver.sleep(100);
          log.push(`woke at ${sim.now()}`);
        })(),
      ),
    );
    sim.schedule(50, () => log.push(`event at ${sim.now()}`));
    await driver.run();
    expect(log).toEqual(['sleep at 5', 'event at 50', 'woke at 105']);
  });

  it('stops at its end time and leaves later events in the queue', async () => {
    const { sim, driver } = setup(100);
    const seen: number[] = [];
    for (const t of [0, 100, 101, 500]) sim.schedule(t, () => seen.push(t));
    expect(await driver.run()).toEqual({ events: 2, monotone: true });
    expect(seen).toEqual([0, 100]);
    expect(sim.pending).toBe(2);
  });

  it('fails the run when a task fails, before any later event runs', async () => {
    const { sim, driver } = setup();
    const later: number[] = [];
    sim.schedule(1, () => driver.spawn(Promise.reject(new Error('boom'))));
    sim.schedule(2, () => later.push(2));
    await expect(driver.run()).rejects.toThrow('boom');
    expect(later).toEqual([]);
  });

  it('fails the run when an event throws', async () => {
    const { sim, driver } = setup();
    sim.schedule(1, () => {
      throw new Error('bad event');
    });
    await expect(driver.run()).rejects.toThrow('bad event');
  });

  it('fails instead of hanging when a task waits on something other than virtual time', async () => {
    const { sim, driver } = setup();
    // A promise no simulated event settles (as a real timer's or a socket's would be).
    sim.schedule(1, () => driver.spawn(new Promise<void>(() => undefined)));
    await expect(driver.run()).rejects.toThrow('a simulated task waits on something other than virtual time');
  });

  it('reports progress as the clock passes each percent of the run', async () => {
    const sim = new Simulation<() => void>(0);
    const seen: number[] = [];
    const driver = new Driver(sim, 1_000, (f) => seen.push(f));
    for (const t of [0, 5, 10, 15, 500, 990]) sim.schedule(t, () => undefined);
    await driver.run();
    expect(seen).toEqual([0.01, 0.5, 0.99]);
  });
});
