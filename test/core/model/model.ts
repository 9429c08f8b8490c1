/**
 * A deliberately simple model of the matchmaker: arrays and linear scans, no indexes, no
 * persistence. The model-based test runs the same commands against it and the core and checks
 * they agree after every step.
 */

export interface ModelLobby {
  id: string;
  mode: string;
  region: string;
  version: string;
  status: 'creating' | 'ready' | 'stopping' | 'stopped';
  closed: boolean;
  publicity: 'public' | 'private';
  createdAt: number;
  readyDeadline: number;
  stoppingAt: number;
  stoppedAt: number;
  normal: number;
  direct: number;
  party: number;
}

export interface ModelPlayer {
  id: string;
  lobby: string;
  source: string;
  status: 'reserved' | 'connected';
  deadline: number;
}

export const CONNECT_MS = 60_000;
export const READY_MS = 120_000;
export const GRACE_MS = 30_000;
export const RETENTION_MS = 600_000;

export class Model {
  now = 0;
  version = 'v1';
  lobbies: ModelLobby[] = [];
  players: ModelPlayer[] = [];

  constructor(
    readonly cap: number,
    readonly lobbyCountMax: number,
  ) {}

  lobby(id: string): ModelLobby | undefined {
    return this.lobbies.find((l) => l.id === id);
  }

  seated(lobbyId: string): ModelPlayer[] {
    return this.players.filter((p) => p.lobby === lobbyId);
  }

  count(lobbyId: string): number {
    return this.seated(lobbyId).length;
  }

  heldBy(source: string): number {
    return this.players.filter((p) => p.source === source).length;
  }

  active(): ModelLobby[] {
    return this.lobbies.filter((l) => l.status === 'creating' || l.status === 'ready');
  }

  /** Lobbies a find of `n` players in (mode, region) may use, and the best player count among them. */
  findCandidates(mode: string, region: string, n: number): { candidates: ModelLobby[]; best: number } {
    const ok = this.active().filter(
      (l) =>
        l.mode === mode &&
        l.region === region &&
        !l.closed &&
        l.publicity === 'public' &&
        l.version === this.version &&
        this.count(l.id) + n <= (n > 1 ? l.party : l.normal),
    );
    const best = Math.max(-1, ...ok.map((l) => this.count(l.id)));
    return { candidates: ok.filter((l) => this.count(l.id) === best), best };
  }

  addLobby(l: Omit<ModelLobby, 'status' | 'closed' | 'createdAt' | 'readyDeadline' | 'stoppingAt' | 'stoppedAt' | 'version'>): void {
    this.lobbies.push({
      ...l,
      version: this.version,
      status: 'creating',
      closed: false,
      createdAt: this.now,
      readyDeadline: this.now + READY_MS,
      stoppingAt: -1,
      stoppedAt: -1,
    });
  }

  seat(lobbyId: string, ids: readonly string[], source: string): void {
    const l = this.lobby(lobbyId);
    if (l === undefined) throw new Error('model: seat in unknown lobby');
    const deadline = (l.status === 'ready' ? this.now : l.readyDeadline) + CONNECT_MS;
    for (const id of ids) this.players.push({ id, lobby: lobbyId, source, status: 'reserved', deadline });
  }

  removePlayer(id: string): void {
    this.players = this.players.filter((p) => p.id !== id);
  }

  beginStop(l: ModelLobby): void {
    if (l.status !== 'creating' && l.status !== 'ready') return;
    l.status = 'stopping';
    l.stoppingAt = this.now;
    this.players = this.players.filter((p) => p.lobby !== l.id);
  }

  finishStop(l: ModelLobby): void {
    if (l.status === 'stopped') return;
    this.beginStop(l);
    l.status = 'stopped';
    l.stoppedAt = this.now;
  }

  ready(l: ModelLobby): void {
    if (l.status !== 'creating') return;
    l.status = 'ready';
    for (const p of this.seated(l.id)) if (p.status === 'reserved') p.deadline = this.now + CONNECT_MS;
  }

  /** What the core's tick does, in the simplest terms. */
  tick(): void {
    for (const l of [...this.lobbies]) {
      if (l.status === 'creating' && this.now >= l.readyDeadline) this.beginStop(l);
      else if (l.status === 'stopping' && this.now >= l.stoppingAt + GRACE_MS) this.finishStop(l);
      else if (l.status === 'stopped' && this.now >= l.stoppedAt + RETENTION_MS) this.lobbies = this.lobbies.filter((x) => x !== l);
    }
    this.players = this.players.filter((p) => !(p.status === 'reserved' && this.now > p.deadline));
  }
}
