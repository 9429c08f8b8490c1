/**
 * HAProxy's runtime API (its "stats socket" at admin level): one connection per call, commands
 * joined by `;` (non-interactive mode: HAProxy answers each, then closes). A multi-line payload
 * (`set ssl cert <file> <<`) is sent alone, ended by an empty line.
 */
import { connect } from 'node:net';

const TIMEOUT_MS = 5_000;

/**
 * Sends `text` (one line, or a payload command) and resolves with everything HAProxy answered.
 *
 * @example
 * const info = await runtimeCall('/run/tavern/haproxy.sock', 'show info');
 */
export const runtimeCall = (socket: string, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    conn.setTimeout(TIMEOUT_MS, () => conn.destroy(new Error(`the HAProxy runtime API did not answer within ${TIMEOUT_MS} ms`)));
    conn.on('data', (chunk: Buffer) => chunks.push(chunk));
    conn.on('error', reject);
    conn.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    conn.end(text.endsWith('\n') ? text : `${text}\n`);
  });

/**
 * Runs commands whose success answer is empty (`add map`, `del map`, `set server … state`) or says what changed (`set server … addr`) in
 * one call; throws with HAProxy's words when any of them answered something.
 *
 * @example
 * await runtimeBatch(socket, ['add map /x.map a 127.0.0.1:20001', 'del map /x.map b']);
 */
export async function runtimeBatch(socket: string, commands: readonly string[]): Promise<void> {
  if (commands.length === 0) return;
  const answer = await runtimeCall(socket, commands.join(';'));
  // `set server … addr` reports what it changed; anything else said is a refusal.
  const said = answer.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/changed from '/.test(l));
  if (said.length > 0) throw new Error(`HAProxy refused a route change: ${said.slice(0, 3).join(' / ')}`);
}

/** One stick-table entry of `show table <name>`: its key and its stored counters. */
export interface TableEntry {
  readonly key: string;
  readonly counters: Readonly<Record<string, number>>;
}

/**
 * `show table <name>`: entries such as
 * `0x55d0: key=a-default.lobby.local.example.test use=0 exp=86399 shard=0 http_req_cnt=3 bytes_in_cnt=0 …`.
 */
export async function showTable(socket: string, table: string): Promise<TableEntry[]> {
  const answer = await runtimeCall(socket, `show table ${table}`);
  const entries: TableEntry[] = [];
  for (const line of answer.split('\n')) {
    if (!line.startsWith('0x')) continue;
    let key: string | undefined;
    const counters: Record<string, number> = {};
    for (const field of line.split(' ').slice(1)) {
      const eq = field.indexOf('=');
      if (eq < 0) continue;
      const name = field.slice(0, eq);
      const value = field.slice(eq + 1);
      if (name === 'key') key = value;
      else if (/^\d+$/.test(value)) counters[name] = Number(value);
    }
    if (key !== undefined) entries.push({ key, counters });
  }
  return entries;
}
