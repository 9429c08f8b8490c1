/**
 * Deterministic number and duration labels for axes: `1.2k`, `3.4M`, `6:00`, `1d 2:00`, `15 min`, `6 h`.
 */
import type { Ticks } from './scale.js';

const UNITS: readonly (readonly [number, string])[] = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/** Fixed-point text without negative zero. */
function fixed(v: number, decimals: number): string {
  const s = v.toFixed(decimals);
  return Number(s) === 0 ? (0).toFixed(decimals) : s;
}

/** The fewest decimals (at most 12) that show `step` exactly. */
function decimalsFor(step: number): number {
  for (let d = 0; d < 12; d++) {
    const scaled = step * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
  }
  return 12;
}

/** The unit used for a magnitude: the largest one not above it. */
function unitFor(magnitude: number): readonly [number, string] {
  return UNITS.find(([value]) => magnitude >= value) ?? [1, ''];
}

/**
 * A compact label with at most one decimal above a thousand and two below.
 *
 * @example
 * formatCompact(1234)      // '1.2k'
 * formatCompact(3_400_000) // '3.4M'
 * formatCompact(0.125)     // '0.13'
 */
export function formatCompact(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 1e15) return v.toExponential(1);
  const [value, suffix] = unitFor(Math.abs(v));
  const text = fixed(v / value, suffix === '' ? 2 : 1).replace(/\.?0+$/, '');
  return `${text === '-0' ? '0' : text}${suffix}`;
}

/**
 * A formatter for one axis: every tick gets the same unit and just enough decimals to be distinct.
 *
 * @example
 * const f = tickFormatter({ ticks: [0, 500, 1000, 1500], step: 500 });
 * [0, 500, 1500].map(f) // ['0', '0.5k', '1.5k']
 */
export function tickFormatter(ticks: Ticks): (v: number) => string {
  const magnitude = Math.max(...ticks.ticks.map(Math.abs));
  if (magnitude >= 1e15 || (magnitude > 0 && magnitude < 1e-4)) {
    const digits = decimalsFor(ticks.step / 10 ** Math.floor(Math.log10(magnitude)));
    return (v) => (v === 0 ? '0' : v.toExponential(digits));
  }
  const [value, suffix] = unitFor(magnitude);
  const decimals = decimalsFor(ticks.step / value);
  return (v) => (v === 0 ? '0' : `${fixed(v / value, decimals)}${suffix}`);
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/**
 * A duration in ms as `h:mm`, with `:ss` when there are seconds and a `Nd ` prefix past a day.
 *
 * @example
 * formatDuration(0)              // '0:00'
 * formatDuration(6 * 3_600_000)  // '6:00'
 * formatDuration(93_600_000)     // '1d 2:00'
 * formatDuration(90_000)         // '0:01:30'
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const total = Math.round(Math.abs(ms) / 1000);
  const sign = ms < 0 && total > 0 ? '-' : '';
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const clock = `${hours}:${pad2(minutes)}${seconds === 0 ? '' : `:${pad2(seconds)}`}`;
  return `${sign}${days === 0 ? '' : `${days}d `}${clock}`;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Elapsed time for a time axis, in the largest units that fit: `0`, `30 s`, `15 min`, `1 h 30 min`,
 * `6 h`, `24 h`; whole days from 48 h (`2 d`, `3 d 12 h`). Values that are not whole seconds (axes
 * under 5 s) are in ms.
 *
 * @example
 * [0, 900_000, 5_400_000, 86_400_000].map(formatElapsed) // ['0', '15 min', '1 h 30 min', '24 h']
 */
export function formatElapsed(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0';
  if (ms < 0) return `-${formatElapsed(-ms)}`;
  if (ms % SECOND !== 0) return `${formatCompact(ms)} ms`;
  const parts: string[] = [];
  let rest = ms;
  const take = (unit: number, suffix: string): void => {
    const n = Math.floor(rest / unit);
    rest -= n * unit;
    if (n > 0) parts.push(`${n} ${suffix}`);
  };
  if (ms >= 2 * DAY) take(DAY, 'd');
  take(HOUR, 'h');
  take(MINUTE, 'min');
  take(SECOND, 's');
  return parts.join(' ');
}
