/**
 * Recorded demand: a JSONL file of timestamped player requests that replaces the synthetic demand.
 * One request per line: `{"at_ms": 1200, "kind": "find", "game_mode": "default", "region": "eu",
 * "party": 2, "session_ms": 900000, "connects": true, "connect_ms": 650}`; `connect_ms` (optional,
 * only with `connects`) is how long after its answer the client connected (absent: the replay draws
 * it), and `"refused": true` marks a request the server refused (optional, default false); blank
 * lines are skipped.
 */
import type { Problem } from '../../core/config/types.js';
import type { RecordedRequest, Scenario } from './types.js';
import { err, ok, type Result } from '../../core/result.js';
import { named, problem } from '../../core/config/path.js';
import { bool, int, oneOf, safeInt, str, strictObject, u32, type Parser } from '../../core/config/strict-reader.js';

export const RECORDED_KEYS: readonly string[] = Object.freeze(['at_ms', 'kind', 'game_mode', 'region', 'party', 'session_ms', 'connects', 'connect_ms', 'refused']);

const KINDS: Readonly<Record<string, RecordedRequest['kind']>> = Object.freeze({ find: 'find', join: 'join', create: 'create' });

const party: Parser<number> = (value, path, out) => {
  const n = u32(value, path, out);
  if (n === 0) out.push(problem(path, 'too-low'));
  return n === 0 ? undefined : n;
};

const request = (line: number): Parser<RecordedRequest> =>
  strictObject(RECORDED_KEYS, (f) => {
    const fields = {
      atMs: f.req('at_ms', safeInt),
      kind: f.req('kind', oneOf(KINDS)),
      gameMode: f.req('game_mode', str),
      region: f.req('region', str),
      party: f.req('party', party),
      sessionMs: f.req('session_ms', int(Number.MAX_SAFE_INTEGER)),
      connects: f.req('connects', bool),
      connectMs: f.opt('connect_ms', int(Number.MAX_SAFE_INTEGER)),
      refused: f.opt('refused', bool),
    };
    const { atMs, kind, gameMode, region, party: size, sessionMs, connects, connectMs } = fields;
    if (atMs === undefined || kind === undefined || gameMode === undefined || region === undefined) return undefined;
    if (size === undefined || sessionMs === undefined || connects === undefined) return undefined;
    return { line, atMs, kind, gameMode, region, party: size, sessionMs, connects, ...(connectMs === undefined ? {} : { connectMs }), refused: fields.refused === true };
  });

function parseLine(text: string, line: number, out: Problem[]): RecordedRequest | undefined {
  const at = ['line', String(line)];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    out.push(problem(at, 'invalid-json'));
    return undefined;
  }
  const parsed = request(line)(json, at, out);
  // A delay to a connection that never happened: the line contradicts itself.
  if (parsed?.connectMs !== undefined && !parsed.connects) {
    out.push(problem(at, 'connect-ms', 'without-connection'));
    return undefined;
  }
  return parsed;
}

/**
 * Parses a recorded demand. Problems carry the 1-based line number: `['line', '12', 'at-ms',
 * 'negative']`, `['line', '3', 'invalid-json']`, `['line', '4', 'kind', 'invalid']`,
 * `['line', '5', 'connect-ms', 'without-connection']` (a `connect_ms` with `connects: false`); a request
 * earlier than the one before it is `['line', '<n>', 'at-ms', 'out-of-order']`. Every line is
 * checked; never throws.
 *
 * @example
 * parseRecordedDemand('{"at_ms":0,"kind":"find","game_mode":"default","region":"eu","party":1,"session_ms":60000,"connects":true}\n');
 * // ok([{ line: 1, atMs: 0, kind: 'find', ... }])
 */
export function parseRecordedDemand(text: string): Result<RecordedRequest[], Problem[]> {
  const out: Problem[] = [];
  const requests: RecordedRequest[] = [];
  let previous: RecordedRequest | undefined;
  text.split('\n').forEach((raw, i) => {
    const body = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (body.trim() === '') return;
    const parsed = parseLine(body, i + 1, out);
    if (parsed === undefined) return;
    if (previous !== undefined && parsed.atMs < previous.atMs) out.push(problem(['line', String(i + 1)], 'at-ms', 'out-of-order'));
    previous = parsed;
    requests.push(parsed);
  });
  return out.length > 0 ? err(out) : ok(requests);
}

/**
 * Checks recorded requests against a scenario: the game mode exists
 * (`line.<n>.game-mode.*m*.not-found`), the region is in the infrastructure and offered by the
 * mode (`line.<n>.region.*r*.not-found`), the request falls inside the run
 * (`line.<n>.at-ms.after-end`).
 *
 * @example
 * checkRecordedDemand(scenario, requests); // [] when every request fits
 */
export function checkRecordedDemand(scenario: Scenario, requests: readonly RecordedRequest[]): Problem[] {
  const out: Problem[] = [];
  const regions = new Set(scenario.infrastructure.regions.map((r) => r.region.id));
  for (const r of requests) {
    const at = ['line', String(r.line)];
    const mode = scenario.resolved.gameModes.find((m) => m.name === r.gameMode);
    if (mode === undefined) out.push(problem(at, 'game-mode', named(r.gameMode), 'not-found'));
    const offered = mode === undefined || mode.regions.some((x) => x.name === r.region);
    if (!regions.has(r.region) || !offered) out.push(problem(at, 'region', named(r.region), 'not-found'));
    if (r.atMs >= scenario.durationMs) out.push(problem(at, 'at-ms', 'after-end'));
  }
  return out;
}
