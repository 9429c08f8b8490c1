/**
 * HAProxy's routing as far as Tavern's runtime-API commands touch it, in memory: map files
 * (hostname → slot backend) and each slot's one server (address, ready or in maintenance). Built
 * from the files HAProxy starts with; a command it would refuse (an unknown command, a second
 * entry for a mapped hostname, removing an entry that is not there) throws, as `runtimeBatch` does.
 */

export interface Server {
  readonly ip: string;
  readonly port: string;
  readonly ready: boolean;
}

const SLOT = /^lobby-slot-(\d+)$/;
const slotOf = (backend: string): number => {
  const m = SLOT.exec(backend);
  if (m === null) throw new Error(`not a slot backend: ${backend}`);
  return Number(m[1]);
};

export class HaproxyModel {
  readonly maps = new Map<string, Map<string, string>>();
  readonly servers = new Map<number, Server>();

  /** `files`: map file → its text; `slots`: each slot's configured `server` address, undefined for a disabled one. */
  constructor(files: Readonly<Record<string, string>>, slots: ReadonlyArray<string | undefined>) {
    for (const [file, text] of Object.entries(files)) {
      const entries = new Map<string, string>();
      for (const line of text.split('\n').filter((l) => l !== '')) {
        const [host, backend, ...rest] = line.split(' ');
        if (host === undefined || backend === undefined || rest.length > 0 || entries.has(host)) throw new Error(`bad map line: ${line}`);
        entries.set(host, backend);
      }
      this.maps.set(file, entries);
    }
    slots.forEach((address, slot) => {
      if (address === undefined) return this.servers.set(slot, { ip: '127.0.0.1', port: '1', ready: false });
      const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(address);
      if (m === null) throw new Error(`bad server address: ${address}`);
      return this.servers.set(slot, { ip: m[1] ?? m[2] ?? '', port: m[3] ?? '', ready: true });
    });
  }

  run(command: string): void {
    const w = command.split(' ');
    const server = (name: string | undefined): [number, Server] => {
      const m = /^(lobby-slot-\d+)\/lobby$/.exec(name ?? '');
      const slot = m?.[1] === undefined ? undefined : slotOf(m[1]);
      const found = slot === undefined ? undefined : this.servers.get(slot);
      if (slot === undefined || found === undefined) throw new Error(`no such server: ${name}`);
      return [slot, found];
    };
    const map = (file: string | undefined): Map<string, string> => {
      const found = this.maps.get(file ?? '');
      if (found === undefined) throw new Error(`unknown map file: ${file}`);
      return found;
    };
    if (w[0] === 'set' && w[1] === 'server' && w[3] === 'addr' && w[5] === 'port' && w.length === 7) {
      const [slot, s] = server(w[2]);
      this.servers.set(slot, { ...s, ip: w[4] ?? '', port: w[6] ?? '' });
    } else if (w[0] === 'set' && w[1] === 'server' && w[3] === 'state' && w.length === 5 && (w[4] === 'ready' || w[4] === 'maint')) {
      const [slot, s] = server(w[2]);
      this.servers.set(slot, { ...s, ready: w[4] === 'ready' });
    } else if (w[0] === 'shutdown' && w[1] === 'sessions' && w[2] === 'server' && w.length === 4) {
      server(w[3]);
    } else if (w[0] === 'add' && w[1] === 'map' && w.length === 5) {
      const entries = map(w[2]);
      if (entries.has(w[3] ?? '')) throw new Error(`a second entry for ${w[3]}`);
      slotOf(w[4] ?? '');
      entries.set(w[3] ?? '', w[4] ?? '');
    } else if (w[0] === 'del' && w[1] === 'map' && w.length === 4) {
      if (!map(w[2]).delete(w[3] ?? '')) throw new Error(`entry not found: ${w[3]}`);
    } else {
      throw new Error(`unknown command: ${command}`);
    }
  }

  /** Where a request for `host` in `file` goes now: its slot and the slot's server, or undefined when unmapped. */
  route(file: string, host: string): { readonly slot: number; readonly server: Server | undefined } | undefined {
    const backend = this.maps.get(file)?.get(host);
    if (backend === undefined) return undefined;
    const slot = slotOf(backend);
    return { slot, server: this.servers.get(slot) };
  }
}
