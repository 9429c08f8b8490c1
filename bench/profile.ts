/**
 * `npm run bench -- profile DIR... [--requests N] [--top 40] [--json]`: where the time of the V8
 * CPU profiles in the DIRs went (a folder `npm run bench -- http --profile DIR` leaves per run, or
 * any `node --cpu-prof` output), aggregated two ways:
 *
 * - **by place**: each sample is charged to the innermost frame of Tavern's own code (`src/…`) on
 *   its stack, so a file's figure includes what it calls in Node, V8 and native addons (SQLite,
 *   HMAC, `writev`); a sample with no Tavern frame goes to its own leaf's module (`node:_http_server`
 *   for the parser's callbacks, `(garbage collector)`, `(program)` for native work V8 cannot
 *   attribute, `(idle)`). Places are grouped into the stages of a find ({@link STAGES}).
 * - **by function**: self time of each function (`name file:line`), the usual bottom-up view.
 *
 * Idle time is listed but left out of the shares. A folder's `run.json` (the http benchmark's:
 * `window_us`, its measured window on the monotonic clock V8's profiles use too, and `requests`,
 * the requests answered in it) keeps only that window's samples and gives every figure in µs per
 * request of the main thread; `--requests N` does the latter for folders without one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { intArg, table, value } from './measure.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  /** µs on the monotonic clock (`process.hrtime`). */
  readonly startTime: number;
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * Stages of a find, by the place a sample is charged to: the first pattern that matches the place
 * names its stage. Places are `src/…` paths or, outside Tavern's code, a module or V8 pseudo-frame.
 */
export const STAGES: readonly (readonly [stage: string, pattern: RegExp])[] = [
  ['idle', /^\(idle\)$/],
  ['garbage collection', /^\(garbage collector\)$/],
  ['node:http parse + write (no Tavern frame)', /^node:(_http|http|net|stream|internal\/(streams|http|net|stream_base_commons|timers|async_hooks|process\/task_queues|event_target|url))|^node:events$|^\(program\)$|^native /],
  ['bridge src/server/http.ts', /^src\/server\/(http|incoming)\.ts$/],
  ['app, routing, CORS, errors', /^src\/server\/(app|router|cors|errors|context)\.ts$/],
  ['auth + tokens (verify the caller, sign the player)', /^src\/server\/(auth|tokens|jwt)\.ts$/],
  ['body parse + validation', /^src\/server\/(body|validate|client)\.ts$|^src\/server\/routes\//],
  ['rate limiting', /^src\/server\/rate-limit\.ts$/],
  ['admission (admit, seat wait, answer)', /^src\/(services\/(admit|seat-wait)|server\/(join-response|render))\.ts$/],
  ['matchmaker service', /^src\/services\/(matchmaker|perform|hub|publish|namespaces)\.ts$/],
  ['core decision', /^src\/core\//],
  ['persistence (SQLite, group commit)', /^src\/adapters\/(sqlite|group-commit|memory)/],
  ['demand recording', /^src\/services\/demand|^src\/adapters\/demand/],
  ['ids, clock', /^src\/adapters\/(system-random|clock)/],
  ['logging', /pino|^src\/server\/logger\.ts$/],
  ['other Tavern code', /^src\//],
];

/** A frame of Tavern's compiled code (the bench cache is under node_modules/.cache; packages are not). */
const isTavern = (frame: CallFrame): boolean => /\/src\/.*\.js$/.test(frame.url) && !/\/node_modules\/(?!\.cache\/)/.test(frame.url);

/** A frame's place: a Tavern file (`src/…`), else its module or pseudo-frame. */
const placeOf = (frame: CallFrame): string => {
  const src = isTavern(frame) ? /\/(src\/.*)$/.exec(frame.url)?.[1] : undefined;
  if (src !== undefined) return src.replace(/\.js$/, '.ts');
  if (frame.url === '') return frame.functionName.startsWith('(') ? frame.functionName : `native ${frame.functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
  return pkg ?? frame.url;
};


interface Totals {
  /** Microseconds by place, by stage and by function (self); idle and busy microseconds. */
  readonly places: Map<string, number>;
  readonly stages: Map<string, number>;
  readonly functions: Map<string, number>;
  idle: number;
  busy: number;
}

const add = (m: Map<string, number>, key: string, us: number): void => void m.set(key, (m.get(key) ?? 0) + us);

/** What the http benchmark says of one run (`run.json` beside its profile). */
interface RunWindow {
  readonly requests: number;
  readonly window_us: readonly [number, number];
}

/** Adds one profile's samples (those inside `window`, when given) to the totals. */
const aggregate = (profile: CpuProfile, totals: Totals, window: RunWindow['window_us'] | undefined): void => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each node's place: its innermost Tavern frame, else its own.
  const placeCache = new Map<number, string>();
  const placeOfNode = (id: number): string => {
    const cached = placeCache.get(id);
    if (cached !== undefined) return cached;
    const leaf = byId.get(id) as ProfileNode;
    let place = placeOf(leaf.callFrame);
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (isTavern(frame)) {
        place = placeOf(frame);
        break;
      }
    }
    placeCache.set(id, place);
    return place;
  };
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window !== undefined && (at < window[0] || at > window[1])) return;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(id) as ProfileNode;
    if (node.callFrame.functionName === '(idle)') {
      totals.idle += us;
      return;
    }
    totals.busy += us;
    const place = placeOfNode(id);
    add(totals.places, place, us);
    add(totals.stages, STAGES.find(([, pattern]) => pattern.test(place))?.[0] ?? 'other (Node, libraries)', us);
    const f = node.callFrame;
    add(totals.functions, `${f.functionName || '(anonymous)'} ${placeOf(f)}${f.url === '' ? '' : `:${f.lineNumber + 1}`}`, us);
  });
};

const ranked = (m: Map<string, number>, top: number): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);

/** The profiles of some folders, aggregated: time by stage, place and function (µs), busy and idle, requests when known. */
export interface ProfileSummary extends Totals {
  readonly files: readonly string[];
  readonly requests: number | undefined;
}

/**
 * Aggregates the `.cpuprofile` files of `dirs` (each folder's `run.json`, when present, keeps its
 * window's samples and adds its requests to `requests`).
 *
 * @example
 * const { stages, busy, requests } = summarizeProfiles(['prof/tavern-c64-r1']);
 */
export function summarizeProfiles(dirs: readonly string[], requests?: number): ProfileSummary {
  const totals: Totals = { places: new Map(), stages: new Map(), functions: new Map(), idle: 0, busy: 0 };
  const files: string[] = [];
  let counted = requests;
  for (const dir of dirs) {
    const run = existsSync(join(dir, 'run.json')) ? (JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunWindow) : undefined;
    if (run !== undefined) counted = (counted ?? 0) + run.requests;
    const here = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
    if (here.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
    for (const f of here) aggregate(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile, totals, run?.window_us);
    files.push(...here);
  }
  return { ...totals, files, requests: counted };
}

export const profileBench = (args: readonly string[]): Promise<void> => {
  const dirs = args.filter((a, i) => !a.startsWith('--') && (i === 0 || !['--requests', '--top'].includes(args[i - 1] as string)));
  if (dirs.length === 0) throw new Error('usage: npm run bench -- profile DIR... [--requests N] [--top 40] [--json]');
  const given = value(args, '--requests') === undefined ? undefined : intArg(args, '--requests', 1, 1, Number.MAX_SAFE_INTEGER);
  const top = intArg(args, '--top', 40, 1, 10_000);
  const totals = summarizeProfiles(dirs, given);
  const { files, requests } = totals;
  const row = ([key, us]: [string, number]): string[] => [
    key, `${((100 * us) / totals.busy).toFixed(1)} %`, requests === undefined ? '-' : (us / requests).toFixed(2),
  ];
  if (args.includes('--json')) {
    const obj = (m: Map<string, number>): Record<string, number> => Object.fromEntries(ranked(m, Number.MAX_SAFE_INTEGER));
    process.stdout.write(`${JSON.stringify({ bench: 'profile', files, busy_us: totals.busy, idle_us: totals.idle, requests: requests ?? null, stages: obj(totals.stages), places: obj(totals.places), functions: obj(totals.functions) })}\n`);
    return Promise.resolve();
  }
  const per = requests === undefined ? '' : `, ${(totals.busy / requests).toFixed(1)} µs per request over ${requests} requests`;
  process.stdout.write(`${files.length} profile(s): busy ${(totals.busy / 1e6).toFixed(2)} s, idle ${(totals.idle / 1e6).toFixed(2)} s${per}\n\n`);
  process.stdout.write(`${table(['stage', 'share of busy', 'µs/request'], ranked(totals.stages, top).map(row))}\n\n`);
  process.stdout.write(`${table(['place (innermost Tavern frame)', 'share of busy', 'µs/request'], ranked(totals.places, top).map(row))}\n\n`);
  process.stdout.write(`${table(['function (self time)', 'share of busy', 'µs/request'], ranked(totals.functions, top).map(row))}\n`);
  return Promise.resolve();
};
