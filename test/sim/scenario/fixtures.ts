/** A small valid scenario (snake_case JSON) and a helper to list problem paths. */
import type { Problem } from '../../../src/core/config/types.js';
import type { Result } from '../../../src/core/result.js';

/** A fresh minimal valid scenario: one mode (`default`), one region (`eu`). */
export const minimal = (): Record<string, unknown> => ({
  version: {
    matchmaker: {
      regions: { eu: {} },
      max_players: 8,
      container: { image_id: '00000000-0000-4000-8000-000000000001', ports: { game: { port: 7777, protocol: 'udp' } } },
      game_modes: { default: {} },
    },
  },
  demand: {
    default: {
      eu: {
        arrivals: { kind: 'constant', per_minute: 10 },
        party_size: { kind: 'choice', weights: { '1': 0.7, '2': 0.3 } },
        mix: { find: 1 },
        session_ms: { kind: 'exponential', mean: 600_000 },
        no_show_share: 0.05,
      },
    },
  },
  infrastructure: {
    regions: [
      {
        id: 'eu',
        display_name: 'Europe',
        lobby_start_delay_ms: { kind: 'constant', value: 2000 },
        lobby_crash_rate_per_hour: 0.01,
        lobby_count_max: 100,
      },
    ],
  },
  duration_ms: 3_600_000,
  seed: 42,
});

/** The problem paths of a failed result, dotted; `[]` when it succeeded. */
export const paths = (r: Result<unknown, readonly Problem[]>): string[] => (r.ok ? [] : r.error.map((p) => p.path.join('.')));

export type Obj = Record<string, unknown>;

/** The object at a dotted path of `root` (test fixtures only: no checks). */
export const obj = (root: unknown, path: string): Obj => path.split('.').reduce<unknown>((o, k) => (o as Obj)[k], root) as Obj;

/** The array at a dotted path of `root`. */
export const arr = (root: unknown, path: string): unknown[] => obj(root, path) as unknown as unknown[];
