/**
 * Refusals in the demand export, end to end: a real server process (the fake runtime, SQLite)
 * refuses finds once its namespace runs `lobby_count_max` lobbies, and a join to a full lobby; the export (`GET .../analytics/matchmaker/demand`) marks exactly the refused requests
 * `refused: true`, and `tavern sim --recorded`'s parser reads the flags back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createGame, publicToken, publishVersion, setLimits, spawnTavern, str, uploadBuild, type BenchGame, type TavernProcess } from '../../bench/http-tavern.js';
import { parseRecordedDemand } from '../../src/sim/scenario/recorded.js';
import { eventually } from '../wait.js';

const LOBBY_COUNT_MAX = 2;

let tavern: TavernProcess;
let lobbyDir: string;

beforeAll(async () => {
  lobbyDir = mkdtempSync(join(tmpdir(), 'tavern-demand-refused-'));
  // SQLite in its data dir whatever this environment says (CI exports DATABASE_URL).
  tavern = await spawnTavern({ env: { DATABASE_URL: '', TAVERN_RUNTIME: 'fake', TAVERN_FAKE_LOBBY_DIR: lobbyDir } });
}, 60_000);

afterAll(async () => {
  await tavern?.stop();
  if (lobbyDir !== undefined) rmSync(lobbyDir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const post = async (path: string, token: string, body: unknown): Promise<Answer> => {
  const res = await fetch(`${tavern.origin}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const lobbyOf = (a: Answer): string => str((a.body['lobby'] as Record<string, unknown> | undefined)?.['lobby_id'], 'lobby_id');

/** The export of `[from, now)`, once it holds `lines` lines (the recorder writes every second). */
const exported = (game: BenchGame, from: number, lines: number): Promise<string> =>
  eventually(`${lines} lines in the export`, async () => {
    const res = await fetch(`${tavern.origin}${game.nsPath}/analytics/matchmaker/demand?start=${from}&end=${Date.now() + 1}`, { headers: { authorization: `Bearer ${game.cloud}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    return text.split('\n').filter((l) => l !== '').length >= lines && text;
  }, { timeoutMs: 10_000, everyMs: 100 });

describe('refused requests in the demand export of a real server', () => {
  it('marks exactly the requests the server refused, and the simulator reads the marks back', async () => {
    const game = await createGame(tavern.origin);
    const buildId = await uploadBuild(tavern.origin, game, { image: Buffer.from('refusals image') });
    await setLimits(tavern.origin, game, LOBBY_COUNT_MAX, 256);
    const pub = await publicToken(tavern.origin, game);
    const from = Date.now();
    await publishVersion(tavern.origin, game, 'refusals', {
      matchmaker: {
        regions: { local: { idle_lobbies: { min: 0, max: 0 } } },
        max_players: 1,
        docker: { image_id: buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: {} },
      },
    });
    const find = { game_modes: ['default'], regions: ['local'] };

    // Each find takes a lobby of its own (one player a lobby) until the namespace runs its maximum.
    const answers: Answer[] = [];
    for (let i = 0; i < LOBBY_COUNT_MAX + 2; i++) answers.push(await post('/matchmaker/lobbies/find', pub, find));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 400, 400]);
    expect(answers.slice(2).map((a) => a.body['code'])).toEqual(['MATCHMAKER_TOO_MANY_LOBBIES', 'MATCHMAKER_TOO_MANY_LOBBIES']);
    // The first player connects (the game reports it with its lobby's token) and stays.
    const first = lobbyOf(answers[0] as Answer);
    const env = JSON.parse(await readFile(join(lobbyDir, `${first}.json`), 'utf8')) as Record<string, string>;
    const playerToken = str(((answers[0] as Answer).body['player'] as Record<string, unknown> | undefined)?.['token'], 'the player token');
    expect((await post('/matchmaker/players/connected', str(env['RIVET_TOKEN'], 'the lobby token'), { player_token: playerToken })).status).toBe(200);
    // A find for a mode the version lacks is a client's mistake, refused but not exported.
    expect((await post('/matchmaker/lobbies/find', pub, { game_modes: ['nope'] })).body['code']).toBe('MATCHMAKER_GAME_MODE_NOT_FOUND');
    // A lobby stops: the namespace has room again, and the next find is seated.
    await call(tavern.origin, 'DELETE', `/cloud/games/${game.gameId}/matchmaker/lobbies/${lobbyOf(answers[1] as Answer)}`, game.cloud);
    const after = await post('/matchmaker/lobbies/find', pub, find);
    expect(after.status).toBe(200);
    answers.push(after);
    // A join to the first lobby, full (one player a lobby): refused, and recorded with that lobby's mode and region.
    const full = await post('/matchmaker/lobbies/join', pub, { lobby_id: first });
    expect(full.body['code']).toBe('MATCHMAKER_LOBBY_FULL');
    answers.push(full);

    const text = await exported(game, from, answers.length);
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['kind'])).toEqual(['find', 'find', 'find', 'find', 'find', 'join']);
    // `refused: true` on exactly the refused requests; absent (not false) on the others.
    expect(lines.map((l) => l['refused'])).toEqual(answers.map((a) => (a.status === 200 ? undefined : true)));
    for (const l of lines.filter((x) => x['refused'] === true)) expect(l).toMatchObject({ game_mode: 'default', region: 'local', party: 1, session_ms: 0, connects: false });
    expect(lines[0]).toMatchObject({ connects: true });
    expect(lines[1]).toMatchObject({ connects: false });
    expect(lines[1]).not.toHaveProperty('refused');

    const parsed = parseRecordedDemand(text);
    if (!parsed.ok) throw new Error(`the export does not parse: ${JSON.stringify(parsed.error)}`);
    expect(parsed.value.map((r) => r.refused)).toEqual([false, false, true, true, false, true]);
    expect(parsed.value.map((r) => r.atMs)).toEqual(lines.map((l) => l['at_ms']));
  }, 60_000);
});
