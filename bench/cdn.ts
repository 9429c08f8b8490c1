/**
 * `npm run bench -- cdn [--json] [--seconds 4] [--upload-mib 256] [--profile <dir>]` (`--profile`: a
 * V8 CPU profile of the Tavern server written there): in one run,
 * - requests/s and latency of a small HTML file and a 1 MiB asset at 64 kept-alive connections,
 *   Tavern's CDN (the compiled server, SQLite, local-disk blobs) against nginx (Debian's
 *   `/usr/sbin/nginx`, one worker) serving the same files from disk with the same headers, each
 *   server pinned to core 0 and the load on core 1; ratio = Tavern / nginx;
 * - upload MB/s of a build through presigned multipart (100 MiB parts, read in 1 MiB chunks; PUT
 *   all at once as `tavern deploy` does (it runs 8 at a time), and one after another; then
 *   completion) to the local-disk adapter against `cp` of the same file on the same disk followed
 *   by `sync` (Tavern fsyncs each part before recording it), and against a bare `node:http`
 *   server doing the same writes and nothing else (`peers/node-upload.ts`, pinned like Tavern: the
 *   floor of an upload through Node's HTTP), three rounds alternating, medians reported; and to
 *   the S3 test server (`node test/s3/server.js`) when it answers at
 *   127.0.0.1:4569, once, parts at once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { canPin, cpuSeconds, pinSelf, SERVER_NODE_FLAGS, spawnServer, type ServerChild } from './http-child.js';
import { runLoad, type LoadResult } from './http-load.js';
import { call, createGame, deploySite, str, TAVERN_ADMIN, type BenchGame } from './http-tavern.js';
import { table } from './measure.js';

const MAIN = fileURLToPath(new URL('../src/server/main.js', import.meta.url));
const NGINX = '/usr/sbin/nginx';
const CDN_DOMAIN = 'cdn.bench';
const HOST = `bench.${CDN_DOMAIN}`;
const S3_ENDPOINT = 'http://127.0.0.1:4569';
const MiB = 2 ** 20;
/** A multipart build's part (wire.md §6.1), as Tavern's presigned requests split it. */
const PART = 100 * MiB;
const FLOOR = fileURLToPath(new URL('./peers/node-upload.js', import.meta.url));
/** Rounds of cp and local-disk uploads, alternating (the median of each is reported). */
const UPLOAD_ROUNDS = 3;
const HTML = `<!doctype html><html><head><title>Bench</title></head><body>${'<p>hello</p>'.repeat(40)}</body></html>\n`;

const argOf = (args: readonly string[], name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const v = i < 0 ? undefined : Number(args[i + 1]);
  return v === undefined || !Number.isFinite(v) || v <= 0 ? fallback : v;
};

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Tavern with a CDN listener; `s3`: its blobs in that bucket of the S3 test server. */
async function startTavern(dir: string, cpu: number | undefined, s3?: string, profileDir?: string): Promise<{ child: ServerChild; api: string; cdn: string }> {
  let cdn = '';
  let api = '';
  const child = await spawnServer({
    name: 'tavern', args: [...SERVER_NODE_FLAGS, MAIN], isolated: true, ...(cpu === undefined ? {} : { cpu }), ...(profileDir === undefined ? {} : { profileDir }),
    env: {
      TAVERN_PORT: '0', TAVERN_CDN_PORT: '0', TAVERN_CDN_DOMAIN: CDN_DOMAIN, TAVERN_DATA_DIR: dir, TAVERN_ADMIN_TOKEN: TAVERN_ADMIN,
      TAVERN_RUNTIME: 'none', TAVERN_RATE_LIMITS: 'off',
      ...(s3 === undefined ? {} : { TAVERN_S3_BUCKET: s3, TAVERN_S3_ENDPOINT: S3_ENDPOINT, TAVERN_S3_ACCESS_KEY_ID: 'S3RVER', TAVERN_S3_SECRET_ACCESS_KEY: 'S3RVER' }),
    },
    portOf: (line) => {
      if (!line.includes('tavern listening')) return undefined;
      const logged = JSON.parse(line) as { publicOrigin: string; cdnOrigin: string };
      api = logged.publicOrigin;
      cdn = logged.cdnOrigin;
      return Number(new URL(api).port);
    },
  });
  return { child, api, cdn };
}

/** One PUT of `length` bytes of `file` from `offset` to a presigned URL. */
const putPart = (url: string, file: string, offset: number, length: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': String(length) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`a presigned PUT answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    if (length === 0) req.end();
    else createReadStream(file, { start: offset, end: offset + length - 1, highWaterMark: MiB }).on('error', reject).pipe(req);
  });

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** A build of `file` through presigned multipart and completion, its parts PUT at once or one after another; seconds taken. */
async function uploadSeconds(api: string, game: BenchGame, file: string, parallel: boolean): Promise<number> {
  const size = statSync(file).size;
  const started = performance.now();
  const build = await call(api, 'POST', `/cloud/games/${game.gameId}/builds`, game.cloud, {
    display_name: 'Bench', image_tag: `bench:${randomUUID().slice(0, 8)}`, image_file: { path: 'image.tar', content_length: size }, multipart_upload: true,
  });
  const parts = build['image_presigned_requests'] as { url: string; byte_offset: number; content_length: number }[];
  if (parallel) await Promise.all(parts.map((p) => putPart(p.url, file, p.byte_offset, p.content_length)));
  else for (const p of parts) await putPart(p.url, file, p.byte_offset, p.content_length);
  await call(api, 'POST', `/cloud/uploads/${str(build['upload_id'], 'upload_id')}/complete`, game.cloud);
  return (performance.now() - started) / 1000;
}

/** The same parts PUT at once to the bare node:http floor server (`peers/node-upload.ts`), then its completion; seconds taken. */
async function floorSeconds(origin: string, file: string, name: string): Promise<number> {
  const size = statSync(file).size;
  const started = performance.now();
  const parts = Array.from({ length: Math.ceil(size / PART) }, (_, i) => ({ offset: i * PART, length: Math.min(PART, size - i * PART) }));
  await Promise.all(parts.map((p) => putPart(`${origin}/${name}?size=${size}&offset=${p.offset}`, file, p.offset, p.length)));
  const done = await fetch(`${origin}/${name}`, { method: 'POST' });
  if (done.status !== 200) throw new Error(`the floor server's completion answered ${done.status}`);
  return (performance.now() - started) / 1000;
}

/** The site (`index.html`, `asset.bin`) uploaded and published in the game's prod namespace. */
/** nginx serving `root` on a free port with Tavern's CDN headers (HTML uncached; ETags on). */
async function startNginx(root: string, dir: string, cpu: number | undefined): Promise<ServerChild> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server {
    listen 127.0.0.1:${port};
    root ${root};
    etag on;
    location ~ \\.html$ { add_header Cache-Control "no-cache, no-store"; }
  }
}
`);
  return spawnNginx(conf, port, cpu);
}

/** nginx in the foreground (pinned with taskset like the Tavern child), ready once it serves `index.html`. */
async function spawnNginx(conf: string, port: number, cpu: number | undefined): Promise<ServerChild> {
  const [command, args] = cpu === undefined ? [NGINX, ['-c', conf, '-e', 'stderr']] : ['taskset', ['-c', String(cpu), NGINX, '-c', conf, '-e', 'stderr']];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (tail = (tail + c).slice(-4096)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${tail}`);
    if (await fetch(`${origin}/index.html`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name: 'nginx', pid: child.pid ?? 0, origin, output: () => tail, exited,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface ServeRow {
  readonly server: string;
  readonly file: string;
  readonly load: LoadResult;
}

export async function cdnBench(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const seconds = argOf(args, '--seconds', 4);
  const uploadMiB = argOf(args, '--upload-mib', 256);
  const connections = 64;
  const pin = canPin();
  const serverCpu = pin ? 0 : undefined;
  if (pin) pinSelf(1);
  const hasNginx = spawnSync(NGINX, ['-v'], { stdio: 'ignore' }).status === 0;
  const work = mkdtempSync(join(tmpdir(), 'tavern-bench-cdn-'));
  const rows: ServeRow[] = [];
  const uploads: { target: string; seconds: number; mb_per_s: number }[] = [];
  try {
    const site = new Map([['index.html', Buffer.from(HTML)], ['asset.bin', randomBytes(MiB)]]);
    const root = join(work, 'site');
    mkdirSync(root);
    for (const [path, body] of site) writeFileSync(join(root, path), body);
    const image = join(work, 'image.tar');
    writeFileSync(image, randomBytes(uploadMiB * MiB));

    const profile = args.indexOf('--profile');
    const tavern = await startTavern(join(work, 'tavern'), serverCpu, undefined, profile < 0 ? undefined : args[profile + 1]);
    try {
      const game = await createGame(tavern.api);
      await deploySite(tavern.api, game, site);
      const nginx = hasNginx ? await startNginx(root, work, serverCpu) : undefined;
      try {
        for (const file of ['index.html', 'asset.bin']) {
          const expected = site.get(file)?.length ?? 0;
          const measure = async (server: string, origin: string, pid?: number): Promise<void> => {
            const load = await runLoad({
              origin, concurrency: connections, warmupMs: 1_000, durationMs: seconds * 1_000,
              shot: () => ({ method: 'GET', path: `/${file}`, headers: { host: HOST }, body: Buffer.alloc(0) }),
              check: (body) => {
                if (Buffer.byteLength(body, 'latin1') < Math.min(expected, 1)) throw new Error(`${server} answered an empty ${file}`);
              },
              ...(pid === undefined ? {} : { serverCpu: () => cpuSeconds(pid) }),
            });
            rows.push({ server, file, load });
          };
          await measure('Tavern CDN', tavern.cdn, tavern.child.pid);
          // nginx's worker is a child of the process started: its CPU time is not read.
          if (nginx !== undefined) await measure('nginx', nginx.origin);
        }
      } finally {
        await nginx?.stop();
      }
      const rounds = { cp: [] as number[], parallel: [] as number[], sequential: [] as number[], floor: [] as number[] };
      const floorDir = join(work, 'floor');
      mkdirSync(floorDir);
      const floor = await spawnServer({
        name: 'node-upload', args: [FLOOR, floorDir], isolated: true, ...(serverCpu === undefined ? {} : { cpu: serverCpu }),
        portOf: (line) => (line.startsWith('{"port"') ? (JSON.parse(line) as { port: number }).port : undefined),
      });
      try {
        for (let round = 0; round < UPLOAD_ROUNDS; round++) {
          const copy = join(work, 'image.copy');
          rmSync(copy, { force: true });
          spawnSync('sync');
          const cpStart = performance.now();
          const copied = spawnSync('cp', [image, copy]);
          spawnSync('sync');
          if (copied.status !== 0) throw new Error('cp failed');
          rounds.cp.push((performance.now() - cpStart) / 1000);
          rounds.parallel.push(await uploadSeconds(tavern.api, game, image, true));
          spawnSync('sync');
          rounds.sequential.push(await uploadSeconds(tavern.api, game, image, false));
          spawnSync('sync');
          rounds.floor.push(await floorSeconds(floor.origin, image, `build-${round}`));
          spawnSync('sync');
        }
      } finally {
        await floor.stop();
      }
      const row = (target: string, seconds: number): void => void uploads.push({ target, seconds, mb_per_s: (uploadMiB * MiB) / 1e6 / seconds });
      row('cp (same disk), then sync', median(rounds.cp));
      row('bare node:http, same writes', median(rounds.floor));
      row('Tavern, local disk', median(rounds.parallel));
      row('Tavern, local disk, parts one by one', median(rounds.sequential));
    } finally {
      await tavern.child.stop();
    }

    const s3Up = await fetch(S3_ENDPOINT).then(() => true, () => false);
    if (s3Up) {
      const bucket = `bench-${randomUUID()}`;
      const client = new S3Client({ region: 'us-east-1', endpoint: S3_ENDPOINT, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      client.destroy();
      const onS3 = await startTavern(join(work, 'tavern-s3'), serverCpu, bucket);
      try {
        const s3Game = await createGame(onS3.api);
        const s = await uploadSeconds(onS3.api, s3Game, image, true);
        uploads.push({ target: 'S3 test server (s3rver)', seconds: s, mb_per_s: (uploadMiB * MiB) / 1e6 / s });
      } finally {
        await onS3.child.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const rate = (server: string, file: string): LoadResult | undefined => rows.find((r) => r.server === server && r.file === file)?.load;
  const ratio = (file: string): number | undefined => {
    const t = rate('Tavern CDN', file);
    const n = rate('nginx', file);
    return t === undefined || n === undefined || n.rps === 0 ? undefined : t.rps / n.rps;
  };
  const cp = uploads.find((u) => u.target.startsWith('cp'));
  const local = uploads.find((u) => u.target === 'Tavern, local disk');
  const oneByOne = uploads.find((u) => u.target === 'Tavern, local disk, parts one by one');
  const bare = uploads.find((u) => u.target.startsWith('bare node:http'));
  const result = {
    connections, seconds, upload_mib: uploadMiB, nginx: hasNginx,
    serve: rows.map((r) => ({ server: r.server, file: r.file, rps: r.load.rps, p50_ms: r.load.p50_ms, p99_ms: r.load.p99_ms, errors: r.load.errors, cpu_us_per_request: r.load.cpu_us_per_request })),
    serve_ratio: { html: ratio('index.html'), asset_1mib: ratio('asset.bin') },
    upload: uploads,
    upload_ratio: cp === undefined || local === undefined ? undefined : local.mb_per_s / cp.mb_per_s,
    upload_ratio_one_by_one: cp === undefined || oneByOne === undefined ? undefined : oneByOne.mb_per_s / cp.mb_per_s,
    floor_ratio: cp === undefined || bare === undefined ? undefined : bare.mb_per_s / cp.mb_per_s,
    upload_ratio_to_floor: bare === undefined || local === undefined ? undefined : local.mb_per_s / bare.mb_per_s,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (n: number | undefined, d = 2): string => (n === undefined ? '-' : n.toFixed(d));
  process.stdout.write(`${table(['server', 'file', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU µs/req'], rows.map((r) => [
    r.server, r.file, r.load.rps.toFixed(0), f(r.load.p50_ms), f(r.load.p99_ms), String(r.load.errors), f(r.load.cpu_us_per_request, 0),
  ]))}\n\n`);
  if (!hasNginx) process.stdout.write(`nginx not measured: ${NGINX} is missing (apt-get install nginx-light)\n`);
  process.stdout.write(`Tavern / nginx at ${connections} connections: HTML ${f(result.serve_ratio.html)}×, 1 MiB asset ${f(result.serve_ratio.asset_1mib)}×\n\n`);
  process.stdout.write(`${table(['upload target', `${uploadMiB} MiB in s`, 'MB/s'], uploads.map((u) => [u.target, f(u.seconds), f(u.mb_per_s, 0)]))}\n`);
  process.stdout.write(`Tavern local-disk upload / cp: ${f(result.upload_ratio)}× (parts one by one: ${f(result.upload_ratio_one_by_one)}×); bare node:http / cp: ${f(result.floor_ratio)}×; Tavern / bare node:http: ${f(result.upload_ratio_to_floor)}×${uploads.some((u) => u.target.startsWith('S3')) ? '' : ' (S3 not measured: no S3 test server at 127.0.0.1:4569)'}\n`);
}

