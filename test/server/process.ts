/**
 * Real server processes for tests: `src/server/main.ts` started with only the environment a test
 * gives it, its output kept for failure messages, stopped with SIGTERM (SIGKILL after 10 s) or
 * killed outright; and small JSON calls against it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../proxy/helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const MAIN = join(ROOT, 'src/server/main.ts');

export interface Server {
  readonly name: string;
  readonly origin: string;
  /** The `tavern listening` log line (`cdnOrigin`, `cdnTlsOrigin`…). */
  readonly listening: Readonly<Record<string, unknown>>;
  readonly child: ChildProcess;
  /** The last lines it wrote (for failure messages). */
  readonly tail: () => string;
  /** Stops it (SIGTERM, then SIGKILL after 10 s); resolves once it exited. */
  readonly stop: () => Promise<void>;
}

export const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));

/**
 * The game proxy's and the CDN's ports the test does not choose: free ones, since their defaults
 * (80/443, 8081/8443) would be shared by every test server running at once.
 */
const ownPorts = async (env: Record<string, string>): Promise<Record<string, string>> => ({
  TAVERN_PROXY_HTTP_PORT: String(await freePort()), TAVERN_PROXY_HTTPS_PORT: String(await freePort()),
  TAVERN_CDN_PORT: '0', TAVERN_CDN_TLS_PORT: '0',
  ...env,
});

/** Starts `node --import tsx src/server/main.ts` with `env` (and ports of its own); resolves once it logged `tavern listening`. */
export async function startServer(name: string, env: Record<string, string>): Promise<Server> {
  // Only the variables given here configure it: nothing leaks in from the test's own environment.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAVERN_') && k !== 'DATABASE_URL' && k !== 'LOG_LEVEL'));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env: { ...inherited, ...(await ownPorts(env)) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > 50) lines.shift();
  };
  const tail = (): string => lines.join('\n');
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', keep);
  const stdout = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let listening: Record<string, unknown> = {};
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s:\n${tail()}`)), 60_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before listening:\n${tail()}`));
    });
    stdout.on('line', (line) => {
      keep(line);
      if (!line.includes('tavern listening')) return;
      const logged = JSON.parse(line) as { publicOrigin?: string };
      listening = logged;
      clearTimeout(timer);
      if (typeof logged.publicOrigin === 'string') resolve(logged.publicOrigin);
      else reject(new Error(`${name} logged no publicOrigin: ${line}`));
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = exited(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(timer);
  };
  return { name, origin, listening, child, tail, stop };
}

export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export const api = async (origin: string, method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> => {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  const res = await fetch(`${origin}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
};

/** The answer's body, failing with it unless the status is 200. */
export const ok = (what: string, answer: Answer): Record<string, unknown> => {
  if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};

export const field = (body: Record<string, unknown>, key: string): string => {
  const v = body[key];
  if (typeof v !== 'string') throw new Error(`no ${key} in ${JSON.stringify(body)}`);
  return v;
};


/** A GET of `path` at `origin` naming `host` in its Host header (fetch cannot set it): a CDN site without DNS. */
export const getWithHost = (origin: string, host: string, path: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, origin), { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
