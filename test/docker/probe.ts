/**
 * Looking at the network from inside a running container: `docker exec` of the image's own node
 * (the node game server image, test/docker/images.ts) with a small probe program, as the
 * container's user, in its namespaces, under its hardening. Every connection attempt and request
 * is bounded; the answer is one JSON line. Test helpers.
 */
import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';

/** What the probe finds of a TCP address: a listener, a refusal (nothing listens), or silence (dropped). */
export type TcpAnswer = 'open' | 'refused' | 'timeout' | `error ${string}`;

/** What to look at: TCP addresses, HTTP requests (a path on `RIVET_API_ENDPOINT`, the container's own), files. */
export interface ProbeSpec {
  readonly tcp?: readonly { readonly host: string; readonly port: number }[];
  /** `token`: a bearer token, or `lobby` for the container's own `RIVET_TOKEN`; `origin`: another than `RIVET_API_ENDPOINT`. */
  readonly http?: readonly { readonly method: string; readonly path: string; readonly token?: string; readonly body?: unknown; readonly origin?: string }[];
  readonly files?: readonly string[];
}

export interface ProbeResult {
  readonly tcp: Record<string, TcpAnswer>;
  readonly http: Record<string, { status: number; code?: string } | { error: string }>;
  readonly files: Record<string, boolean>;
}

/** The probe, run by `node -e` inside the container (CommonJS; its spec is argv[1]). */
const PROBE = `
const net = require('node:net');
const fs = require('node:fs');
const spec = JSON.parse(process.argv[1]);
const tcp = (host, port) => new Promise((resolve) => {
  const socket = net.connect({ host, port });
  const done = (answer) => { socket.destroy(); resolve(answer); };
  socket.setTimeout(1500, () => done('timeout'));
  socket.once('connect', () => done('open'));
  socket.once('error', (e) => done(e.code === 'ECONNREFUSED' ? 'refused' : 'error ' + e.code));
});
const http = async (r) => {
  const token = r.token === 'lobby' ? process.env.RIVET_TOKEN : r.token;
  const headers = { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: 'Bearer ' + token }) };
  try {
    const res = await fetch((r.origin ?? process.env.RIVET_API_ENDPOINT) + r.path, { method: r.method, headers, signal: AbortSignal.timeout(3000), ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }) });
    const text = await res.text();
    let code;
    try { code = JSON.parse(text).code; } catch {}
    return { status: res.status, ...(code === undefined ? {} : { code }) };
  } catch (e) { return { error: String(e && e.cause && e.cause.code || e) }; }
};
// A ref'd timer keeps the probe alive until it has answered: fetch's own timeout timer is unref'd, so a
// request left hanging by a connection the server closed at once would otherwise let node exit silently.
const alive = setInterval(() => undefined, 1000);
(async () => {
  const out = { tcp: {}, http: {}, files: {} };
  for (const t of spec.tcp ?? []) out.tcp[t.host + ':' + t.port] = await tcp(t.host, t.port);
  for (const r of spec.http ?? []) out.http[r.method + ' ' + (r.origin ?? '') + r.path] = await http(r);
  for (const f of spec.files ?? []) out.files[f] = fs.existsSync(f);
  process.stdout.write(JSON.stringify(out) + '\\n');
  clearInterval(alive);
})();
`;

/**
 * Runs the probe inside `container` (bounded: 60 s in all) and returns what it found.
 *
 * @example
 * const seen = await probe(docker, container, { tcp: [{ host: '172.18.0.1', port: 5432 }] });
 * seen.tcp['172.18.0.1:5432']; // 'refused'
 */
export const probe = async (docker: Dockerode, container: Dockerode.Container, spec: ProbeSpec): Promise<ProbeResult> => {
  const exec = await container.exec({ Cmd: ['/usr/bin/node', '-e', PROBE, JSON.stringify(spec)], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  err.on('data', (c: Buffer) => (stderr += c.toString()));
  docker.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`the probe did not finish within 60 s: ${stdout}${stderr}`));
    }, 60_000);
    stream.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as ProbeResult;
  } catch {
    const ran = (await exec.inspect()) as { ExitCode: number | null; Running: boolean };
    const { State } = await container.inspect();
    throw new Error(`the probe said ${JSON.stringify(stdout)} ${JSON.stringify(stderr)} (its exit code ${ran.ExitCode}; the container ${State.Status}, exit code ${State.ExitCode}, OOM-killed ${State.OOMKilled})`);
  }
};
