/**
 * Default ports that are not free: a port another program holds, or one this user may not bind
 * (80 without root: probed as `nobody` when the tests run as root), gives way to its fallback and
 * says why; a port without a fallback (set explicitly) fails as it is.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { listenOr, portOr } from '../../src/server/ports.js';

const PORTS = fileURLToPath(new URL('../../src/server/ports.ts', import.meta.url));
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

const held: Server[] = [];
const hold = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer();
    held.push(s);
    s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
  });
afterAll(() => {
  for (const s of held) s.close();
});

/** `portOr('127.0.0.1', 80, 8880)` in a process of the user `nobody` (the tests run as root). */
function probe80AsNobody(): { port: number; why: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-ports-'));
  try {
    chmodSync(dir, 0o755);
    const script = join(dir, 'probe.mjs');
    writeFileSync(script, `const { portOr } = await import(${JSON.stringify(PORTS)});
const why = [];
const port = await portOr('127.0.0.1', 80, 8880, (w) => why.push(w));
process.stdout.write(JSON.stringify({ port, why }));
`);
    const run = spawnSync(process.execPath, ['--import', TSX, script], { uid: 65534, gid: 65534, cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (run.status !== 0) throw new Error(`the probe as nobody failed: ${run.stderr}`);
    return JSON.parse(run.stdout) as { port: number; why: string[] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('default ports that are not free', () => {
  it('a port another program holds gives way to its fallback, and the reason is said', async () => {
    const taken = await hold();
    const why: string[] = [];
    expect(await portOr('127.0.0.1', taken, 8880, (w) => why.push(w))).toBe(8880);
    expect(why).toEqual(['in use by another program']);
    const server = createHttpServer();
    const port = await listenOr(server, '127.0.0.1', taken, 0, (w) => why.push(w));
    expect(port).not.toBe(taken);
    expect(port).toBeGreaterThan(0);
    expect(why).toHaveLength(2);
    server.close();
  });

  it('a port set explicitly (no fallback) is kept, and fails to listen when taken', async () => {
    const taken = await hold();
    expect(await portOr('127.0.0.1', taken, undefined, () => undefined)).toBe(taken);
    await expect(listenOr(createHttpServer(), '127.0.0.1', taken, undefined, () => undefined)).rejects.toThrow(/EADDRINUSE/);
  });

  it('port 80, which a user who is not root may not bind, gives way to 8880 and says why', async () => {
    // Linux lets anyone bind from net.ipv4.ip_unprivileged_port_start (1024 unless changed).
    const unprivilegedFrom = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    const asUser = process.getuid?.() === 0 ? probe80AsNobody() : await (async () => {
      const why: string[] = [];
      return { port: await portOr('127.0.0.1', 80, 8880, (w) => why.push(w)), why };
    })();
    if (unprivilegedFrom <= 80) expect(asUser.port).toBe(80);
    else expect(asUser).toEqual({ port: 8880, why: ['not permitted for this user (ports below 1024 need root or CAP_NET_BIND_SERVICE)'] });
  }, 60_000);
});
