/**
 * `tavern logs` and `tavern lobbies list` (the real command) against a Tavern app served on
 * 127.0.0.1 with the fake runtime: a lobby's streams merged in time and marked, one stream alone
 * as it was written; the running lobbies, then the recent failures with their last lines (all
 * recent stops with --all).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/server/http.js';
import { harness, settle, str, until, type Harness } from '../server/harness.js';
import { tavern } from './run.js';

let h: Harness;
let server: Server;
let dir: string;
let env: Record<string, string>;
let pub: string;

beforeAll(async () => {
  h = harness({ readyAfterMs: 0 });
  // The CLI shows ages against the real clock.
  h.clock.set(Date.now());
  const s = await h.setup();
  pub = s.pub;
  server = createHttpServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { TAVERN_API: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, TAVERN_TOKEN: s.cloud };
  dir = await mkdtemp(join(tmpdir(), 'tavern-lobbies-cli-'));
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  h.cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** A ready lobby found by a player. */
const findLobby = async (): Promise<string> => {
  const found = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
  return str(found.body['lobby']?.['lobby_id']);
};

describe('tavern logs', () => {
  it('shows the game server\'s two streams and Tavern\'s own lines by default, in time order, each line marked; --stream picks one, unmarked', async () => {
    const lobbyId = await findLobby();
    const t = h.clock.now();
    await h.logBook.write(lobbyId, 'std_out', [{ at: t + 1, line: 'hello' }]);
    await h.logBook.write(lobbyId, 'std_err', [{ at: t + 2, line: 'TypeError: boom' }, { at: t + 2, line: '    at main (server.js:3:9)' }]);
    await h.logBook.write(lobbyId, 'std_out', [{ at: t + 3, line: 'bye' }]);
    h.clock.set(t + 10);
    h.runtime.exit(lobbyId, 'crashed', 1);

    const all = await tavern(dir, env, 'logs', lobbyId);
    expect(all.stderr).toBe('');
    expect(all.stdout.trimEnd().split('\n')).toEqual([
      `out| fake container ${lobbyId} started`,
      'out| hello',
      'err| TypeError: boom',
      'err|     at main (server.js:3:9)',
      'out| bye',
      '[tavern] stopping: the game server crashed with code 1',
    ]);
    const errs = await tavern(dir, env, 'logs', lobbyId, '--stream', 'std_err');
    expect(errs.stdout.trimEnd().split('\n')).toEqual(['TypeError: boom', '    at main (server.js:3:9)']);
    expect((await tavern(dir, env, 'logs', lobbyId, '--stream', 'tavern')).stdout).toBe('stopping: the game server crashed with code 1\n');
    const bad = await tavern(dir, env, 'logs', lobbyId, '--stream', 'stdout');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--stream must be std_out, std_err or tavern');
  }, 60_000);
});

describe('tavern lobbies list', () => {
  /** Lets the lobby's stop be committed and kept. */
  const stopped = async (lobbyId: string): Promise<void> => {
    await until(() => [...h.store.world.namespaces.values()].some((ns) => ns.lobbies.get(lobbyId)?.lifecycle.status === 'stopped'));
    await settle();
  };

  it('shows the running lobbies, then the lobbies that failed recently with why, exit code, run time and last lines; --all every recent stop', async () => {
    const failing = await findLobby();
    await h.logBook.write(failing, 'std_err', [{ at: h.clock.now(), line: 'Error: cannot bind port' }]);
    // After the first test's crash: the newest failure is listed first.
    h.clock.set(h.clock.now() + 1_000);
    h.runtime.exit(failing, 'crashed', 2);
    await stopped(failing);
    const normal = await findLobby();
    h.runtime.exit(normal, 'exited', 0);
    await stopped(normal);
    const running = await findLobby();

    const listed = await tavern(dir, env, 'lobbies', 'list');
    expect(listed.stderr).toBe('');
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LOBBY ID\s+REGION\s+MODE\s+PLAYERS\s+FLAGS\s+AGE$/);
    expect(lines.find((l) => l.startsWith(running))).toMatch(new RegExp(`^${running}\\s+local\\s+default\\s+1/4\\s+ready\\s`));
    const section = lines.indexOf('recently failed (last 24 h, newest first; --all for every stop; tavern logs <lobby id> for the whole log):');
    expect(section).toBeGreaterThan(1);
    expect(lines[section + 1]).toMatch(/^LOBBY ID\s+MODE\s+REASON\s+EXIT\s+RAN\s+STOPPED$/);
    expect(lines[section + 2]).toMatch(new RegExp(`^${failing}\\s+default\\s+crashed\\s+2\\s+\\d+s\\s+\\d+s ago$`));
    expect(lines.slice(section + 3, section + 6)).toEqual([
      `    out| fake container ${failing} started`,
      '    err| Error: cannot bind port',
      '    [tavern] stopping: the game server crashed with code 2',
    ]);
    expect(listed.stdout).not.toContain(normal);

    const all = await tavern(dir, env, 'lobbies', 'list', '--all');
    expect(all.stdout).toContain('recently stopped (last 24 h, newest first; tavern logs <lobby id> for the whole log):');
    expect(all.stdout).toMatch(new RegExp(`^${normal}\\s+default\\s+exited\\s+0\\s`, 'm'));
    expect(all.stdout).toMatch(new RegExp(`^${failing}\\s+default\\s+crashed\\s+2\\s`, 'm'));
  }, 60_000);
});

describe('tavern logs of a long log', () => {
  it('says how many earlier lines the newest 256 leave out, and --all prints every line', async () => {
    const lobbyId = await findLobby();
    const t = h.clock.now();
    await h.logBook.write(lobbyId, 'std_out', Array.from({ length: 299 }, (_, i) => ({ at: t + i, line: `line ${i + 1}` })));
    const tail = await tavern(dir, env, 'logs', lobbyId, '--stream', 'std_out');
    const shown = tail.stdout.trimEnd().split('\n');
    expect(shown).toHaveLength(256);
    expect(shown.at(-1)).toBe('line 299');
    // 300 lines in all: the fake container's start line, then 299.
    expect(tail.stderr).toBe(`(earlier lines left out: 44 of std_out; \`tavern logs ${lobbyId} --all\` prints every line)\n`);
    const all = await tavern(dir, env, 'logs', lobbyId, '--stream', 'std_out', '--all');
    expect(all.stderr).toBe('');
    expect(all.stdout.trimEnd().split('\n')).toEqual([`fake container ${lobbyId} started`, ...Array.from({ length: 299 }, (_, i) => `line ${i + 1}`)]);
    const merged = await tavern(dir, env, 'logs', lobbyId, '--all');
    expect(merged.stdout.trimEnd().split('\n')).toHaveLength(300);
  }, 60_000);
});
