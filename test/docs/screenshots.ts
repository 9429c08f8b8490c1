/**
 * `npm run screenshots`: makes docs/screenshots/dashboard.png (the README's picture of the
 * dashboard), docs/screenshots/lobby.png (a lobby's page) and docs/screenshots/preview.png (a deploy
 * preview on six hours of made-up recorded demand, bench/preview-recording.ts, written into the
 * server's database: the new config halves max players), from a real server instead of by hand. A server with the fake runtime (seeded; no
 * Docker, no game proxy) in a temporary folder; the sample game's page and a build deployed by the
 * real CLI (`tavern deploy`, the build uploaded first, since the fake runtime runs no image);
 * headless Chromium (/usr/bin/chromium) signs in with the cloud token; three players find a lobby
 * and two of them connect, as a game server would report them; the overview is taken once the
 * history charts (kept by the server) show them, then the lobby's page following its log.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, createGame, publicToken, str, TAVERN_ADMIN, uploadBuild } from '../../bench/http-tavern.js';
import { writeRecording } from '../../bench/preview-recording.js';
import { openSqlite } from '../../src/adapters/sqlite/index.js';
import { tavern } from '../cli/run.js';
import { launchChromium } from '../dashboard/chromium.js';
import { startServer } from '../server/process.js';

const OUT = fileURLToPath(new URL('../../docs/screenshots/dashboard.png', import.meta.url));
const LOBBY_OUT = fileURLToPath(new URL('../../docs/screenshots/lobby.png', import.meta.url));
const PREVIEW_OUT = fileURLToPath(new URL('../../docs/screenshots/preview.png', import.meta.url));
const CLIENT = fileURLToPath(new URL('../../examples/hello-game/client/', import.meta.url));

/** The sample game's config, its image replaced by an uploaded build and its port by a udp one (no game proxy here). */
const rivetToml = (buildId: string): string => `[matchmaker]
max_players = 8
tier = "basic-1d1"

[matchmaker.regions]
local = {}

[matchmaker.docker]
image_id = "${buildId}"
ports.default = { port = 3000, protocol = "udp" }

[matchmaker.game_modes]
default = { idle_lobbies = { min = 1, max = 2 } }

[cdn]
build_output = "./client/"
`;

const dir = await mkdtemp(join(tmpdir(), 'tavern-screenshots-'));
const lobbyDir = join(dir, 'lobbies');
await mkdir(lobbyDir);
const server = await startServer('tavern (screenshots)', {
  TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'data'), TAVERN_ADMIN_TOKEN: TAVERN_ADMIN, TAVERN_INSTANCE_ID: `shots-${randomUUID().slice(0, 8)}`,
  TAVERN_RUNTIME: 'fake', TAVERN_FAKE_SEED: '1', TAVERN_FAKE_LOBBY_DIR: lobbyDir, TAVERN_PROXY: 'off',
});
try {
  const game = await createGame(server.origin, 'hello', 'Hello game');
  const buildId = await uploadBuild(server.origin, game, { image: Buffer.from('the fake runtime runs no image'), displayName: 'hello-game server' });
  const project = join(dir, 'hello-game');
  await cp(CLIENT, join(project, 'client'), { recursive: true });
  await writeFile(join(project, 'rivet.toml'), rivetToml(buildId));
  const deployed = await tavern(project, { TAVERN_API: server.origin, TAVERN_TOKEN: game.cloud }, 'deploy', '--name', 'hello v1');
  if (deployed.code !== 0) throw new Error(`tavern deploy failed:\n${deployed.stderr}`);
  // Six hours of recorded demand before now, for the preview (the server reads the same database).
  const stores = openSqlite(join(dir, 'data'), { checkpoints: 'inline' });
  try {
    await writeRecording(stores.demand, { namespaceId: game.nsId, start: Date.now() - 6 * 3_600_000, minutes: 360, ccu: 40, gameMode: 'default', region: 'local', seed: 1 });
  } finally {
    await stores.close();
  }

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1400 } });
    await page.goto(`${server.origin}/dashboard`);
    await page.getByLabel('Token', { exact: true }).fill(game.cloud);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('hello v1').waitFor();

    // Three players find a lobby while the dashboard watches; the game server (its token from the
    // fake runtime's lobby folder) reports two of them connected.
    const token = await publicToken(server.origin, game);
    const found = [];
    for (let i = 0; i < 3; i++) found.push(await call(server.origin, 'POST', '/matchmaker/lobbies/find', token, { game_modes: ['default'] }));
    const lobbyId = str((found[0]?.['lobby'] as { lobby_id?: unknown } | undefined)?.lobby_id, 'a lobby id');
    const lobbyEnv = JSON.parse(await readFile(join(lobbyDir, `${lobbyId}.json`), 'utf8')) as { RIVET_TOKEN: string };
    for (const f of found.slice(0, 2)) {
      await call(server.origin, 'POST', '/matchmaker/players/connected', lobbyEnv.RIVET_TOKEN, { player_token: str((f['player'] as { token?: unknown }).token, 'a player token') });
    }

    const row = page.locator(`tr[data-lobby="${lobbyId}"]`);
    await row.waitFor();
    // The history charts (kept by the server, refreshed every 15 s) show this minute's find and lobby.
    await page.waitForFunction(() => {
      // In the page (this file is compiled without the DOM's types).
      const inPage = globalThis as unknown as { document: { querySelector(s: string): { getAttribute(name: string): string | null } | null } };
      return /players: peak [1-9]/.test(inPage.document.querySelector('#chart-players svg')?.getAttribute('aria-label') ?? '');
    }, undefined, { timeout: 30_000 });
    await mkdir(join(OUT, '..'), { recursive: true });
    await page.screenshot({ path: OUT, fullPage: true });
    process.stdout.write(`wrote ${OUT}\n`);
    // The lobby's page, following its log.
    await row.getByRole('button', { name: `Open lobby ${lobbyId}` }).click();
    await page.locator('#logs').filter({ hasText: 'started' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: LOBBY_OUT, fullPage: true });
    process.stdout.write(`wrote ${LOBBY_OUT}\n`);
    // The deploy preview: the live config with half the max players, on the recording above.
    await page.getByRole('button', { name: 'Back to the overview' }).click();
    await page.getByRole('button', { name: 'Preview' }).click();
    const box = page.getByLabel('New version config (JSON; it starts as the live one: edit it)');
    const live = JSON.parse(await box.inputValue()) as { matchmaker: { max_players: number } };
    await box.fill(JSON.stringify({ ...live, matchmaker: { ...live.matchmaker, max_players: live.matchmaker.max_players / 2 } }, null, 2));
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await page.locator('#preview-charts svg').first().waitFor({ timeout: 120_000 });
    await page.screenshot({ path: PREVIEW_OUT, fullPage: true });
    process.stdout.write(`wrote ${PREVIEW_OUT}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
