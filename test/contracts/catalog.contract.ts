/**
 * The CatalogStore contract: every adapter runs this same suite (memory.test.ts, sqlite.test.ts,
 * postgres.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import type {
  BuildRecord,
  CatalogStore,
  CdnSiteRecord,
  GameRecord,
  NamespaceRecord,
  TokenRecord,
  UploadRecord,
  VersionRecord,
} from '../../src/io/catalog.js';

/** A fresh, empty catalog, and a second store on the same database (another process's view). */
export interface CatalogUnderTest {
  readonly catalog: CatalogStore;
  readonly twin: CatalogStore;
  close(): Promise<void>;
}

const game = (over: Partial<GameRecord> = {}): GameRecord => ({
  id: randomUUID(),
  nameId: `game-${randomUUID().slice(0, 8)}`,
  displayName: 'A game',
  developerGroupId: randomUUID(),
  createdAt: 1_000,
  ...over,
});

const namespace = (gameId: string, over: Partial<NamespaceRecord> = {}): NamespaceRecord => ({
  id: randomUUID(),
  gameId,
  nameId: `ns-${randomUUID().slice(0, 8)}`,
  displayName: 'Production',
  versionId: randomUUID(),
  createdAt: 2_000,
  settings: DEFAULT_NAMESPACE_SETTINGS,
  cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: false },
  domains: [],
  ...over,
});

const upload = (gameId: string, over: Partial<UploadRecord> = {}): UploadRecord => ({
  id: randomUUID(),
  gameId,
  kind: 'build',
  files: [{ path: 'image.tar', contentLength: 1024, contentType: 'application/x-tar', parts: 1 }, { path: 'b/c.bin', contentLength: 7, parts: 3 }],
  createdAt: 3_000,
  expiresAt: 4_000,
  ...over,
});

/**
 * Registers the CatalogStore contract for one adapter.
 *
 * @example
 * catalogContract('sqlite', async () => ({ catalog, twin, close }));
 */
export const catalogContract = (name: string, open: () => Promise<CatalogUnderTest>): void => {
  describe(`CatalogStore contract: ${name}`, () => {
    const opened: CatalogUnderTest[] = [];
    const fresh = async () => {
      const c = await open();
      opened.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of opened.splice(0)) await c.close();
    });

    it('games: create, get, list in creation order; id and name id are unique', async () => {
      const { catalog } = await fresh();
      const a = game({ nameId: 'alpha' });
      const b = game({ nameId: 'beta' });
      const c = game({ nameId: 'gamma' });
      for (const g of [b, a, c]) expect(await catalog.createGame(g)).toEqual({ ok: true, value: g });
      expect(await catalog.getGame(a.id)).toEqual(a);
      expect(await catalog.getGame(randomUUID())).toBeUndefined();
      expect((await catalog.listGames()).map((g) => g.id)).toEqual([b.id, a.id, c.id]);
      expect(await catalog.createGame(game({ id: a.id }))).toEqual({ ok: false, error: { conflict: 'id', value: a.id } });
      expect(await catalog.createGame(game({ nameId: 'beta' }))).toEqual({ ok: false, error: { conflict: 'name-id', value: 'beta' } });
      // Both taken: the id is reported.
      expect(await catalog.createGame(game({ id: c.id, nameId: 'alpha' }))).toEqual({ ok: false, error: { conflict: 'id', value: c.id } });
      expect(await catalog.listGames()).toHaveLength(3);
    });

    it('namespaces: name id unique within a game only; listed per game in creation order; updates patch', async () => {
      const { catalog } = await fresh();
      const g1 = game();
      const g2 = game();
      await catalog.createGame(g1);
      await catalog.createGame(g2);
      const prod = namespace(g1.id, { nameId: 'prod' });
      const staging = namespace(g1.id, { nameId: 'staging' });
      const other = namespace(g2.id, { nameId: 'prod' });
      for (const ns of [staging, prod, other]) expect(await catalog.createNamespace(ns)).toEqual({ ok: true, value: ns });
      expect(await catalog.createNamespace(namespace(g1.id, { nameId: 'prod' }))).toEqual({ ok: false, error: { conflict: 'name-id', value: 'prod' } });
      expect(await catalog.createNamespace(namespace(g2.id, { id: prod.id }))).toEqual({ ok: false, error: { conflict: 'id', value: prod.id } });
      expect(await catalog.getNamespace(prod.id)).toEqual(prod);
      expect(await catalog.getNamespace(randomUUID())).toBeUndefined();
      expect((await catalog.listNamespaces(g1.id)).map((n) => n.id)).toEqual([staging.id, prod.id]);
      expect((await catalog.listNamespaces(g2.id)).map((n) => n.id)).toEqual([other.id]);
      expect(await catalog.listNamespaces(randomUUID())).toEqual([]);

      const settings = { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 7 };
      const versionId = randomUUID();
      const cdn = { authType: 'basic' as const, authUsers: [{ user: 'u', passwordHash: 'h' }], enableDomainPublicAuth: true };
      const updated = await catalog.updateNamespace(prod.id, { displayName: 'Live', versionId, settings, cdn });
      expect(updated).toEqual({ ...prod, displayName: 'Live', versionId, settings, cdn });
      expect(await catalog.getNamespace(prod.id)).toEqual(updated);
      expect(await catalog.updateNamespace(prod.id, { displayName: 'Again' })).toEqual({ ...updated, displayName: 'Again' });
      expect(await catalog.updateNamespace(randomUUID(), { displayName: 'x' })).toBeUndefined();
    });

    it('domains: lowercase, unique across namespaces, kept in the order added, freed on removal', async () => {
      const { catalog } = await fresh();
      const g = game();
      await catalog.createGame(g);
      const a = namespace(g.id, { domains: [{ domain: 'Play.Example.com', createdAt: 1 }, { domain: 'b.example.com', createdAt: 2 }] });
      const created = await catalog.createNamespace(a);
      expect(created.ok && created.value.domains).toEqual([{ domain: 'play.example.com', createdAt: 1 }, { domain: 'b.example.com', createdAt: 2 }]);
      expect((await catalog.namespaceByDomain('PLAY.example.COM'))?.id).toBe(a.id);
      expect(await catalog.namespaceByDomain('nope.example.com')).toBeUndefined();

      // Taken by another namespace, or twice in one record.
      expect(await catalog.createNamespace(namespace(g.id, { domains: [{ domain: 'B.EXAMPLE.COM', createdAt: 3 }] }))).toEqual({
        ok: false,
        error: { conflict: 'domain', value: 'b.example.com' },
      });
      const twice = namespace(g.id, { domains: [{ domain: 'x.example.com', createdAt: 1 }, { domain: 'X.example.com', createdAt: 2 }] });
      expect(await catalog.createNamespace(twice)).toEqual({ ok: false, error: { conflict: 'domain', value: 'x.example.com' } });
      // A refused namespace left nothing behind.
      expect(await catalog.getNamespace(twice.id)).toBeUndefined();
      expect(await catalog.namespaceByDomain('x.example.com')).toBeUndefined();

      const b = namespace(g.id);
      await catalog.createNamespace(b);
      expect(await catalog.addDomain(b.id, { domain: 'Play.example.com', createdAt: 4 })).toEqual({ ok: false, error: { conflict: 'domain', value: 'play.example.com' } });
      expect(await catalog.addDomain(randomUUID(), { domain: 'free.example.com', createdAt: 4 })).toBeUndefined();
      const added = await catalog.addDomain(a.id, { domain: 'C.example.com', createdAt: 5 });
      expect(added?.ok && added.value.domains.map((d) => d.domain)).toEqual(['play.example.com', 'b.example.com', 'c.example.com']);

      const removed = await catalog.removeDomain(a.id, 'PLAY.example.com');
      expect(removed?.domains.map((d) => d.domain)).toEqual(['b.example.com', 'c.example.com']);
      expect(await catalog.namespaceByDomain('play.example.com')).toBeUndefined();
      // Removing a domain another namespace owns changes nothing.
      expect((await catalog.removeDomain(b.id, 'b.example.com'))?.domains).toEqual([]);
      expect((await catalog.namespaceByDomain('b.example.com'))?.id).toBe(a.id);
      expect(await catalog.removeDomain(randomUUID(), 'b.example.com')).toBeUndefined();
      const moved = await catalog.addDomain(b.id, { domain: 'play.example.com', createdAt: 6 });
      expect(moved?.ok && moved.value.domains).toEqual([{ domain: 'play.example.com', createdAt: 6 }]);
      expect((await catalog.namespaceByDomain('play.example.com'))?.id).toBe(b.id);
      expect((await catalog.getNamespace(a.id))?.domains.map((d) => d.domain)).toEqual(['b.example.com', 'c.example.com']);
    });

    it('versions, builds and CDN sites: create, get, list per game in creation order; ids unique; configs kept as written; a build\'s pushed image recorded once', async () => {
      const { catalog, twin } = await fresh();
      const g = game();
      const h = game();
      // Key order carries meaning in a config (region priority, mode order): it must survive storage.
      const config = { matchmaker: { regions: { 'lnd-atl': {}, local: {}, aaa: {} }, game_modes: { zeta: {}, alpha: { max_players: 2 } } }, cdn: { routes: [] } };
      const v1: VersionRecord = { id: randomUUID(), gameId: g.id, displayName: 'v1', createdAt: 1, config, lobbyGroupIds: { zeta: randomUUID(), alpha: randomUUID() } };
      const v2: VersionRecord = { ...v1, id: randomUUID(), displayName: 'v2', config: null };
      const v3: VersionRecord = { ...v1, id: randomUUID(), gameId: h.id };
      for (const v of [v2, v1, v3]) expect(await catalog.createVersion(v)).toEqual({ ok: true, value: v });
      expect(await catalog.createVersion({ ...v3, gameId: g.id })).toEqual({ ok: false, error: { conflict: 'id', value: v3.id } });
      const got = await catalog.getVersion(v1.id);
      expect(got).toEqual(v1);
      expect(JSON.stringify(got?.config)).toBe(JSON.stringify(config));
      expect(await catalog.getVersion(randomUUID())).toBeUndefined();
      expect((await catalog.listVersions(g.id)).map((v) => v.id)).toEqual([v2.id, v1.id]);

      const build = (over: Partial<BuildRecord> = {}): BuildRecord => ({
        id: randomUUID(), gameId: g.id, uploadId: randomUUID(), displayName: 'b', imageTag: 'game:1', kind: 'docker_image', compression: 'lz4', createdAt: 1, ...over,
      });
      const [b1, b2] = [build(), build({ displayName: 'second' })];
      for (const b of [b1, b2]) expect(await catalog.createBuild(b)).toEqual({ ok: true, value: b });
      expect(await catalog.createBuild(build({ id: b1.id }))).toEqual({ ok: false, error: { conflict: 'id', value: b1.id } });
      expect(await catalog.getBuild(b2.id)).toEqual(b2);
      expect(await catalog.getBuild(randomUUID())).toBeUndefined();
      expect((await catalog.listBuilds(g.id)).map((b) => b.id)).toEqual([b1.id, b2.id]);
      expect(await catalog.listBuilds(h.id)).toEqual([]);
      // The pushed image is recorded once: a second reference (another instance's push) leaves the first.
      const pushed = `127.0.0.1:5000/games/tavern-build@sha256:${'a'.repeat(64)}`;
      expect(await catalog.recordBuildImage(b1.id, pushed)).toEqual({ ...b1, image: pushed });
      expect(await catalog.recordBuildImage(b1.id, `127.0.0.1:5000/games/tavern-build@sha256:${'b'.repeat(64)}`)).toEqual({ ...b1, image: pushed });
      expect(await catalog.getBuild(b1.id)).toEqual({ ...b1, image: pushed });
      expect((await twin.getBuild(b1.id))?.image).toBe(pushed);
      expect(await catalog.getBuild(b2.id)).toEqual(b2);
      expect(await catalog.recordBuildImage(randomUUID(), pushed)).toBeUndefined();

      const site = (over: Partial<CdnSiteRecord> = {}): CdnSiteRecord => ({ id: randomUUID(), gameId: g.id, uploadId: randomUUID(), displayName: 's', createdAt: 1, ...over });
      const [s1, s2] = [site(), site({ gameId: h.id })];
      for (const s of [s1, s2]) expect(await catalog.createCdnSite(s)).toEqual({ ok: true, value: s });
      expect(await catalog.createCdnSite(site({ id: s2.id }))).toEqual({ ok: false, error: { conflict: 'id', value: s2.id } });
      expect(await catalog.getCdnSite(s1.id)).toEqual(s1);
      expect(await catalog.getCdnSite(randomUUID())).toBeUndefined();
      expect((await catalog.listCdnSites(g.id)).map((s) => s.id)).toEqual([s1.id]);
    });

    it('uploads: completeUpload marks once, a second call returns the record unchanged', async () => {
      const { catalog, twin } = await fresh();
      const u = upload(randomUUID());
      expect(await catalog.createUpload(u)).toEqual({ ok: true, value: u });
      expect(await catalog.createUpload(upload(u.gameId, { id: u.id }))).toEqual({ ok: false, error: { conflict: 'id', value: u.id } });
      expect(await catalog.getUpload(u.id)).toEqual(u);
      expect(await catalog.getUpload(randomUUID())).toBeUndefined();
      const done = await catalog.completeUpload(u.id, 5_000);
      expect(done).toEqual({ ...u, completedAt: 5_000 });
      expect(await catalog.completeUpload(u.id, 6_000)).toEqual(done);
      expect(await twin.completeUpload(u.id, 7_000)).toEqual(done);
      expect(await catalog.getUpload(u.id)).toEqual(done);
      expect(await catalog.completeUpload(randomUUID(), 5_000)).toBeUndefined();
      // Racing completions: exactly one time wins, every caller sees it.
      const v = upload(u.gameId);
      await catalog.createUpload(v);
      const raced = await Promise.all([catalog.completeUpload(v.id, 1), twin.completeUpload(v.id, 2), catalog.completeUpload(v.id, 3)]);
      const at = raced[0]?.completedAt;
      expect([1, 2, 3]).toContain(at);
      expect(raced.map((r) => r?.completedAt)).toEqual([at, at, at]);
    });

    it('uploads: expiredUploads lists the open ones past expiry, oldest first; abandonUpload marks once and blocks completion', async () => {
      const { catalog, twin } = await fresh();
      const g = randomUUID();
      const late = upload(g, { expiresAt: 9_000 });
      const early = upload(g, { expiresAt: 8_000, files: [{ path: 'x', contentLength: 6e6, parts: 2, multipartId: 'mp-1' }] });
      const done = upload(g, { expiresAt: 7_000 });
      const fresh2 = upload(g, { expiresAt: 20_000 });
      for (const u of [late, early, done, fresh2]) await catalog.createUpload(u);
      await catalog.completeUpload(done.id, 6_000);
      expect(await catalog.expiredUploads(10_000, 10)).toEqual([early, late]);
      expect(await catalog.expiredUploads(10_000, 1)).toEqual([early]);
      expect(await catalog.expiredUploads(8_000, 10)).toEqual([]);
      const abandoned = await catalog.abandonUpload(early.id, 11_000);
      expect(abandoned).toEqual({ ...early, abandonedAt: 11_000 });
      expect(await twin.abandonUpload(early.id, 12_000)).toEqual(abandoned);
      expect(await catalog.completeUpload(early.id, 13_000)).toEqual(abandoned);
      expect(await catalog.abandonUpload(done.id, 11_000)).toEqual({ ...done, completedAt: 6_000 });
      expect(await catalog.abandonUpload(randomUUID(), 11_000)).toBeUndefined();
      expect((await twin.expiredUploads(10_000, 10)).map((u) => u.id)).toEqual([late.id]);
    });

    it('tokens: put, get, revoke (once; the first revocation time stays)', async () => {
      const { catalog } = await fresh();
      const t: TokenRecord = { jti: randomUUID(), kind: 'namespace-public', gameId: randomUUID(), namespaceId: randomUUID(), createdAt: 10, expiresAt: 20 };
      const cloud: TokenRecord = { jti: randomUUID(), kind: 'cloud', createdAt: 11 };
      expect(await catalog.putToken(t)).toEqual({ ok: true, value: t });
      expect(await catalog.putToken(cloud)).toEqual({ ok: true, value: cloud });
      expect(await catalog.putToken({ ...cloud, kind: 'lobby' })).toEqual({ ok: false, error: { conflict: 'id', value: cloud.jti } });
      expect(await catalog.getToken(t.jti)).toEqual(t);
      expect(await catalog.getToken(randomUUID())).toBeUndefined();
      expect(await catalog.revokeToken(t.jti, 15)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.revokeToken(t.jti, 16)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.getToken(t.jti)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.getToken(cloud.jti)).toEqual(cloud);
      expect(await catalog.revokeToken(randomUUID(), 15)).toBeUndefined();
    });

    it('what one store writes, the other reads from the next turn of the event loop: namespace changes, domains and revocations', async () => {
      const { catalog, twin } = await fresh();
      // A request read from a socket after the write runs in a later turn: the SQLite catalog looks for other connections' commits once per turn.
      const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
      const g = game();
      await catalog.createGame(g);
      const ns = namespace(g.id);
      await catalog.createNamespace(ns);
      const t: TokenRecord = { jti: randomUUID(), kind: 'cloud', gameId: g.id, createdAt: 1 };
      await catalog.putToken(t);
      // Both read (and may keep) the current records first.
      for (const store of [catalog, twin]) {
        expect((await store.getNamespace(ns.id))?.displayName).toBe(ns.displayName);
        expect(await store.getToken(t.jti)).toEqual(t);
      }
      await twin.updateNamespace(ns.id, { displayName: 'Renamed' });
      await nextTurn();
      expect((await catalog.getNamespace(ns.id))?.displayName).toBe('Renamed');
      await catalog.addDomain(ns.id, { domain: 'play.example.com', createdAt: 5 });
      // The writer sees its own write at once.
      expect((await catalog.getNamespace(ns.id))?.domains.map((d) => d.domain)).toEqual(['play.example.com']);
      await nextTurn();
      expect((await twin.getNamespace(ns.id))?.domains.map((d) => d.domain)).toEqual(['play.example.com']);
      await twin.removeDomain(ns.id, 'play.example.com');
      await nextTurn();
      expect((await catalog.getNamespace(ns.id))?.domains).toEqual([]);
      await twin.revokeToken(t.jti, 9);
      await nextTurn();
      expect((await catalog.getToken(t.jti))?.revokedAt).toBe(9);
      const later: TokenRecord = { jti: randomUUID(), kind: 'cloud', gameId: g.id, createdAt: 2 };
      expect(await catalog.getToken(later.jti)).toBeUndefined();
      await twin.putToken(later);
      await nextTurn();
      expect(await catalog.getToken(later.jti)).toEqual(later);
    });

    it('settings: set once, then read; racing first writers agree on one value', async () => {
      const { catalog, twin } = await fresh();
      expect(await catalog.getSetting('signing-key')).toBeUndefined();
      expect(await catalog.putSettingIfAbsent('signing-key', 'k1')).toBe('k1');
      expect(await twin.putSettingIfAbsent('signing-key', 'k2')).toBe('k1');
      expect(await twin.getSetting('signing-key')).toBe('k1');
      for (let i = 0; i < 10; i++) {
        const key = `race-${i}`;
        const got = await Promise.all([catalog.putSettingIfAbsent(key, 'a'), twin.putSettingIfAbsent(key, 'b')]);
        expect(['a', 'b']).toContain(got[0]);
        expect(got[1]).toBe(got[0]);
        expect(await catalog.getSetting(key)).toBe(got[0]);
      }
    });

    it('lobby hosts: one claim per lobby across instances, listed per instance oldest first, released once gone', async () => {
      const { catalog, twin } = await fresh();
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const host = (lobbyId: string, instanceId: string, createdAt: number) => ({ lobbyId, namespaceId: 'ns', instanceId, createdAt });
      expect(await catalog.claimLobbyHost(host(b, 'one', 20))).toEqual({ ok: true, value: host(b, 'one', 20) });
      expect(await catalog.claimLobbyHost(host(a, 'one', 10))).toEqual({ ok: true, value: host(a, 'one', 10) });
      expect(await twin.claimLobbyHost(host(c, 'two', 5))).toEqual({ ok: true, value: host(c, 'two', 5) });
      // Another instance (or this one again) cannot claim a lobby that has a host.
      expect(await twin.claimLobbyHost(host(a, 'two', 30))).toEqual({ ok: false, error: { conflict: 'id', value: a } });
      const racing = randomUUID();
      const claims = await Promise.all([catalog.claimLobbyHost(host(racing, 'one', 40)), twin.claimLobbyHost(host(racing, 'two', 40))]);
      expect(claims.filter((r) => r.ok)).toHaveLength(1);
      const winner = claims[0]?.ok === true ? 'one' : 'two';
      expect((await twin.lobbyHosts('one')).map((h) => h.lobbyId)).toEqual(winner === 'one' ? [a, b, racing] : [a, b]);
      expect(await catalog.lobbyHosts('two')).toEqual(winner === 'two' ? [host(c, 'two', 5), host(racing, 'two', 40)] : [host(c, 'two', 5)]);
      await twin.releaseLobbyHost(a);
      await twin.releaseLobbyHost(a);
      expect((await catalog.lobbyHosts('one')).map((h) => h.lobbyId)).toEqual(winner === 'one' ? [b, racing] : [b]);
      expect((await catalog.claimLobbyHost(host(a, 'two', 50))).ok).toBe(true);
      expect(await catalog.lobbyHosts('nobody')).toEqual([]);
    });

    it('logs: sequence numbers per stream, paging with after and limit, lines kept exactly', async () => {
      const { catalog, twin } = await fresh();
      const lobby = randomUUID();
      const lines = ['boot', 'héllo wörld ✓', 'tab\tand "quotes" \\ backslash', 'nul\u0000byte', '', 'x'.repeat(10_000)].map((line, i) => ({ at: 1_000 + i, line }));
      expect(await catalog.readLogs(lobby, 'std_out', 0, 10)).toEqual({ lines: [], last: 0 });
      expect(await catalog.appendLogs(lobby, 'std_out', lines.slice(0, 2))).toBe(2);
      expect(await catalog.appendLogs(lobby, 'std_out', [])).toBe(2);
      expect(await catalog.appendLogs(lobby, 'std_out', lines.slice(2))).toBe(6);
      expect(await catalog.appendLogs(lobby, 'std_err', [{ at: 5, line: 'err' }])).toBe(1);
      expect(await catalog.appendLogs(randomUUID(), 'std_out', [{ at: 5, line: 'other lobby' }])).toBe(1);

      expect(await catalog.readLogs(lobby, 'std_out', 0, 100)).toEqual({ lines, last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 0, 2)).toEqual({ lines: lines.slice(0, 2), last: 2 });
      expect(await catalog.readLogs(lobby, 'std_out', 2, 3)).toEqual({ lines: lines.slice(2, 5), last: 5 });
      expect(await catalog.readLogs(lobby, 'std_out', 5, 3)).toEqual({ lines: lines.slice(5), last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 6, 3)).toEqual({ lines: [], last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 2, 0)).toEqual({ lines: [], last: 2 });
      expect(await catalog.readLogs(lobby, 'std_err', 0, 10)).toEqual({ lines: [{ at: 5, line: 'err' }], last: 1 });
      expect(await catalog.readLogs(randomUUID(), 'std_err', 3, 10)).toEqual({ lines: [], last: 3 });

      // Concurrent appends to one stream from two connections: every line gets its own number, batches stay together.
      const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: 5 }, (_, i) => ({ at: b, line: `${b}:${i}` })));
      const lasts = await Promise.all(batches.map((batch, b) => (b % 2 === 0 ? catalog : twin).appendLogs(lobby, 'std_err', batch)));
      expect(new Set(lasts).size).toBe(8);
      const all = await catalog.readLogs(lobby, 'std_err', 1, 1_000);
      expect(all.last).toBe(41);
      for (const [b, last] of lasts.entries()) {
        const page = await twin.readLogs(lobby, 'std_err', last - 5, 5);
        expect(page.lines.map((l) => l.line)).toEqual(batches[b]?.map((l) => l.line));
      }
    });

    it('logs: the newest lines of a stream, old to new, with its last number; tavern is a stream like the others', async () => {
      const { catalog, twin } = await fresh();
      const lobby = randomUUID();
      expect(await catalog.lastLogs(lobby, 'tavern', 5)).toEqual({ lines: [], last: 0 });
      const lines = Array.from({ length: 12 }, (_, i) => ({ at: 100 + i, line: `line ${i}` }));
      await catalog.appendLogs(lobby, 'tavern', lines.slice(0, 7));
      await twin.appendLogs(lobby, 'tavern', lines.slice(7));
      await catalog.appendLogs(lobby, 'std_out', [{ at: 1, line: 'out' }]);
      expect(await twin.lastLogs(lobby, 'tavern', 5)).toEqual({ lines: lines.slice(7), last: 12 });
      expect(await catalog.lastLogs(lobby, 'tavern', 100)).toEqual({ lines, last: 12 });
      expect(await catalog.lastLogs(lobby, 'tavern', 0)).toEqual({ lines: [], last: 12 });
      expect(await catalog.lastLogs(lobby, 'std_out', 5)).toEqual({ lines: [{ at: 1, line: 'out' }], last: 1 });
      expect(await catalog.readLogs(lobby, 'tavern', 10, 5)).toEqual({ lines: lines.slice(10), last: 12 });
    });
  });
};
