/**
 * The bcrypt worker pool: checks on worker threads at the lowest CPU priority, a bounded queue
 * (`busy` past it, nothing checked), queued checks dropped when their client goes away.
 */
import { readdirSync, readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BcryptPool } from '../../src/server/cdn/bcrypt-pool.js';

let pool: BcryptPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

const live = (): AbortSignal => new AbortController().signal;

/** The niceness of each thread of this process (Linux). */
const niceness = (): number[] =>
  readdirSync('/proc/self/task').map((t) => {
    const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });

describe('BcryptPool', () => {
  it('tells a match from a mismatch, on a worker thread of the lowest priority (nice 19)', async () => {
    pool = new BcryptPool({ workers: 1 });
    const hash = await bcrypt.hash('s3cret', 4);
    expect(await pool.check('s3cret', hash, live())).toBe('match');
    expect(await pool.check('wrong', hash, live())).toBe('mismatch');
    expect(pool.checked).toBe(2);
    expect(niceness()).toContain(19);
  });

  it('queues at most `queue` checks: past it a check is busy and never made', async () => {
    const small = new BcryptPool({ workers: 1, queue: 2 });
    pool = small;
    const hash = await bcrypt.hash('s3cret', 8);
    const checks = [1, 2, 3, 4].map((i) => small.check(`wrong-${i}`, hash, live()));
    expect(small.waiting).toBe(2);
    expect(await Promise.all(checks)).toEqual(['mismatch', 'mismatch', 'mismatch', 'busy']);
    expect(small.checked).toBe(3);
  });

  it('drops a queued check whose client went away; close answers the queued ones gone', async () => {
    pool = new BcryptPool({ workers: 1, queue: 4 });
    const hash = await bcrypt.hash('s3cret', 8);
    const left = new AbortController();
    const first = pool.check('a', hash, live());
    const dropped = pool.check('b', hash, left.signal);
    const third = pool.check('s3cret', hash, live());
    left.abort();
    expect(await dropped).toBe('gone');
    expect(await Promise.all([first, third])).toEqual(['mismatch', 'match']);
    expect(pool.checked).toBe(2);
    expect(await pool.check('c', hash, left.signal)).toBe('gone');

    const running = pool.check('d', hash, live());
    const queued = pool.check('e', hash, live());
    await pool.close();
    expect(await queued).toBe('gone');
    await expect(running).rejects.toThrow();
  });
});
