/**
 * Parsers of a scenario's arrivals: party sizes (a distribution or a `choice`) and arrival rate
 * curves (`constant`, `piecewise`).
 */
import { choice, CONTINUOUS, dispatch } from '../../core/config/parse-distribution.js';
import { problem } from '../../core/config/path.js';
import { num, safeInt, strictObject, type Parser } from '../../core/config/strict-reader.js';
import type { PartySizeDistribution, RateCurve, RatePoint } from './types.js';

/** A party size distribution: a {@link distribution} or a {@link choice}. */
export const partySize: Parser<PartySizeDistribution> = dispatch<PartySizeDistribution>({ ...CONTINUOUS, choice });

const point: Parser<RatePoint> = strictObject(['at_ms', 'per_minute'], (f) => {
  const atMs = f.req('at_ms', safeInt);
  const perMinute = f.req('per_minute', num());
  return atMs === undefined || perMinute === undefined ? undefined : { at: atMs, perMinute };
});

const points: Parser<readonly RatePoint[]> = (value, path, out) => {
  if (!Array.isArray(value)) {
    out.push(problem(path, 'invalid-type'));
    return undefined;
  }
  if (value.length === 0) out.push(problem(path, 'empty'));
  const parsed = value.map((item: unknown, i) => point(item, [...path, String(i)], out));
  parsed.forEach((p, i) => {
    const before = parsed[i - 1];
    if (p !== undefined && before !== undefined && p.at <= before.at) out.push(problem(path, String(i), 'at-ms', 'not-increasing'));
  });
  const kept = parsed.filter((p) => p !== undefined);
  return kept.length === value.length && kept.length > 0 ? kept : undefined;
};

const piecewise: Parser<RateCurve> = (input, path, out) =>
  strictObject<RateCurve>(['kind', 'period_ms', 'points'], (f) => {
    const periodMs = f.opt('period_ms', safeInt);
    const list = f.req('points', points);
    if (periodMs === 0) out.push(problem(path, 'period-ms', 'not-positive'));
    const lastIndex = (list?.length ?? 0) - 1;
    const outside = periodMs !== undefined && periodMs > 0 && list !== undefined && (list[lastIndex]?.at ?? 0) >= periodMs;
    if (outside) out.push(problem(path, 'points', String(lastIndex), 'at-ms', 'not-in-period'));
    if (list === undefined || periodMs === 0 || outside) return undefined;
    return periodMs === undefined ? { kind: 'piecewise', points: list } : { kind: 'piecewise', period: periodMs, points: list };
  })(input, path, out);

const constantRate: Parser<RateCurve> = strictObject(['kind', 'per_minute'], (f) => {
  const perMinute = f.req('per_minute', num());
  return perMinute === undefined ? undefined : { kind: 'constant', perMinute };
});

/**
 * Arrivals per minute: `{kind: 'constant', per_minute}` or `{kind: 'piecewise', period_ms?,
 * points: [{at_ms, per_minute}]}` with at least one point (`points.empty`), strictly increasing
 * times (`points.<i>.at-ms.not-increasing`), all inside the period (`...not-in-period`).
 *
 * @example
 * rateCurve({ kind: 'constant', per_minute: -1 }, ['a'], out); // out: [['a', 'per-minute', 'negative']]
 */
export const rateCurve: Parser<RateCurve> = dispatch<RateCurve>({ constant: constantRate, piecewise });
