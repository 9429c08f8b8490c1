/**
 * `npm run bench -- cdn-auth [--json] [--probes 1000] [--rounds 3] [--cost 10]`: what wrong CDN passwords cost
 * the rest of the server (issue 36). The compiled server with a CDN site behind basic auth (one
 * user, a bcrypt hash of `--cost`), `TAVERN_TRUST_PROXY` on; in one run, `--rounds` of `--probes`
 * sequential `GET /health` on the API listener idle, then as many under waves of 50 concurrent
 * wrong-password CDN requests (each from its own `X-Forwarded-For` address, so no per-address
 * limit applies: the worker pool and its queue carry the load), the phases alternating so that
 * the machine's own drift falls on both alike. Prints /health p50 and p99 of each phase (all
 * rounds pooled), the loaded / idle ratios (the issue's bound: p99 within 2x), and what the CDN
 * answered meanwhile. The server is pinned to
 * core 0 (its bcrypt workers too) and the load to core 1 where `taskset` allows.
 */
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import { canPin, pinSelf, SERVER_NODE_FLAGS, spawnServer, type ServerChild } from './http-child.js';
import { percentile } from './http-load.js';
import { call, createGame, deploySite, TAVERN_ADMIN } from './http-tavern.js';
import { intArg, table } from './measure.js';

const MAIN = fileURLToPath(new URL('../src/server/main.js', import.meta.url));
const CDN_DOMAIN = 'cdn.bench';
const HOST = `bench.${CDN_DOMAIN}`;
const CONCURRENCY = 50;

interface Latency {
  readonly probes: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
}

/** `count` sequential GETs of `/health` (a failed one throws): their latencies (ms). */
async function probe(origin: string, agent: Agent, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const status = await get(`${origin}/health`, agent, {});
    if (status !== 200) throw new Error(`/health answered ${status}`);
    times.push(performance.now() - start);
  }
  return times;
}

const latency = (times: readonly number[]): Latency => {
  const sorted = Float64Array.from(times).sort();
  return { probes: sorted.length, p50_ms: percentile(sorted, 50), p99_ms: percentile(sorted, 99) };
};

/** One GET; its status once the body was read. */
const get = (url: string, agent: Agent, headers: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    request(url, { agent, headers }, (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)).on('error', reject)).on('error', reject).end();
  });

async function startTavern(dir: string, cpu: number | undefined): Promise<{ child: ServerChild; api: string; cdn: string }> {
  let cdn = '';
  let api = '';
  const child = await spawnServer({
    name: 'tavern', args: [...SERVER_NODE_FLAGS, MAIN], isolated: true, ...(cpu === undefined ? {} : { cpu }),
    env: {
      TAVERN_PORT: '0', TAVERN_CDN_PORT: '0', TAVERN_CDN_DOMAIN: CDN_DOMAIN, TAVERN_DATA_DIR: dir, TAVERN_ADMIN_TOKEN: TAVERN_ADMIN,
      TAVERN_RUNTIME: 'none', TAVERN_TRUST_PROXY: 'true',
    },
    portOf: (line) => {
      if (!line.includes('tavern listening')) return undefined;
      const logged = JSON.parse(line) as { publicOrigin: string; cdnOrigin: string };
      api = logged.publicOrigin;
      cdn = logged.cdnOrigin;
      return Number(new URL(api).port);
    },
  });
  return { child, api, cdn };
}

export async function cdnAuthBench(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const probes = intArg(args, '--probes', 1_000, 100, 100_000);
  const rounds = intArg(args, '--rounds', 3, 1, 100);
  const cost = intArg(args, '--cost', 10, 4, 12);
  const pin = canPin();
  if (pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'tavern-bench-cdn-auth-'));
  // Idle sockets closed after 2 s, before the server's keep-alive timeout (5 s) can close one under a request.
  const agent = new Agent({ keepAlive: true, timeout: 2_000, maxSockets: CONCURRENCY + 8 });
  try {
    const tavern = await startTavern(join(work, 'tavern'), pin ? 0 : undefined);
    try {
      const game = await createGame(tavern.api);
      await deploySite(tavern.api, game, new Map([['index.html', Buffer.from('members only\n')]]));
      await call(tavern.api, 'POST', `${game.nsPath}/auth-user`, game.cloud, { user: 'alice', password: await bcrypt.hash('right', cost) });
      await call(tavern.api, 'PUT', `${game.nsPath}/cdn-auth`, game.cloud, { auth_type: 'basic' });
      const right = { host: HOST, authorization: `Basic ${Buffer.from('alice:right').toString('base64')}` };
      if ((await get(`${tavern.cdn}/`, agent, right)) !== 200) throw new Error('the right password was refused');

      await probe(tavern.api, agent, Math.min(200, probes));
      const answers = new Map<number, number>();
      let sent = 0;
      const wave = async (): Promise<void> => {
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          sent += 1;
          const headers = { host: HOST, authorization: `Basic ${Buffer.from(`alice:wrong-${sent}`).toString('base64')}`, 'x-forwarded-for': `10.${(sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}` };
          const status = await get(`${tavern.cdn}/`, agent, headers);
          answers.set(status, (answers.get(status) ?? 0) + 1);
        }));
      };
      const answered = (): number => [...answers.values()].reduce((a, b) => a + b, 0);
      let loadedSeconds = 0;
      /** Probes under waves that follow one another; returns once the last wave ended. */
      const underLoad = async (): Promise<number[]> => {
        const before = answered();
        let stop = false;
        const started = performance.now();
        const load = (async () => {
          for (let i = 0; i < 100_000 && !stop; i++) await wave();
        })();
        // The load is on once the wave's first answers came back (503s at once, 401s as checks end).
        for (let i = 0; i < 10_000 && answered() === before; i++) await probe(tavern.api, agent, 1);
        try {
          return await probe(tavern.api, agent, probes);
        } finally {
          stop = true;
          await load;
          loadedSeconds += (performance.now() - started) / 1000;
        }
      };
      const idleTimes: number[] = [];
      const loadedTimes: number[] = [];
      for (let round = 0; round < rounds; round++) {
        idleTimes.push(...(await probe(tavern.api, agent, probes)));
        loadedTimes.push(...(await underLoad()));
      }
      const idle = latency(idleTimes);
      const loaded = latency(loadedTimes);
      const checks = answers.get(401) ?? 0;
      const result = {
        cost, concurrency: CONCURRENCY, rounds, pinned: pin, idle, loaded,
        ratio_p50: loaded.p50_ms / idle.p50_ms, ratio_p99: loaded.p99_ms / idle.p99_ms,
        cdn_answers: Object.fromEntries(answers), checks_per_s: checks / loadedSeconds,
      };
      if (json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      const ms = (n: number): string => n.toFixed(2);
      process.stdout.write(`${table(['/health', 'probes', 'p50 ms', 'p99 ms'], [
        ['idle', String(idle.probes), ms(idle.p50_ms), ms(idle.p99_ms)],
        [`${CONCURRENCY} wrong passwords`, String(loaded.probes), ms(loaded.p50_ms), ms(loaded.p99_ms)],
        ['loaded / idle', '', `${result.ratio_p50.toFixed(2)}x`, `${result.ratio_p99.toFixed(2)}x`],
      ])}\n`);
      process.stdout.write(`\n${rounds} rounds of ${probes} probes per phase, alternating; bcrypt cost ${cost}, ${pin ? 'server on core 0, load on core 1' : 'not pinned'}; CDN answers under load: ${[...answers].map(([s, n]) => `${n} × ${s}`).join(', ')} (${result.checks_per_s.toFixed(1)} checks/s)\n`);
    } finally {
      await tavern.child.stop();
    }
  } finally {
    agent.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}
