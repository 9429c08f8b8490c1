/** The line of each key in a TOML file: tables, arrays of tables, dotted and quoted keys, inline tables, strings. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'smol-toml';
import { pathKey, tomlKeyLines } from '../../src/cli/toml-lines.js';
import { RIVET_TOML } from './game-folder.js';

const lineOf = (text: string, ...path: string[]): number | undefined => tomlKeyLines(text).get(pathKey(path));

/** Every key path of a parsed value, array items by index. */
const keyPaths = (value: unknown, path: string[] = []): string[][] => {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...path, String(i)], ...keyPaths(v, [...path, String(i)])]);
  if (typeof value !== 'object' || value === null || value instanceof Date) return [];
  return Object.entries(value).flatMap(([k, v]) => [[...path, k], ...keyPaths(v, [...path, k])]);
};

describe('tomlKeyLines', () => {
  it('finds keys under tables, dotted keys and keys in inline tables', () => {
    const text = ['# a comment [not.a.table]', '[matchmaker]', 'max_player = 32', '', '[matchmaker.docker]', 'ports.default = { port = 3000, protocl = "udp" }',
      'matchmaker.x = 1', '  [matchmaker.game_modes.default]', '  docker.privileged = true  # trailing comment'].join('\n');
    expect(lineOf(text, 'matchmaker', 'max_player')).toBe(3);
    expect(lineOf(text, 'matchmaker', 'docker', 'ports', 'default', 'protocl')).toBe(6);
    expect(lineOf(text, 'matchmaker', 'docker', 'matchmaker', 'x')).toBe(7);
    expect(lineOf(text, 'matchmaker', 'game_modes', 'default', 'docker', 'privileged')).toBe(9);
    expect(lineOf(text, 'matchmaker')).toBe(2);
    expect(lineOf(text, 'not')).toBeUndefined();
  });

  it('indexes arrays of tables under their current parent, and items of inline arrays', () => {
    const text = [
      '[[matchmaker.lobby_groups]]', 'name_id = "a"', '[[matchmaker.lobby_groups.regions]]', 'region_id = "fra"',
      '[[matchmaker.lobby_groups]]', 'name_id = "b"', '[[matchmaker.lobby_groups.regions]]', 'region_id = "sfo"', 'tier_nme = "x"',
      '[matchmaker.lobby_groups.runtime.docker]', 'ports = [', '  { label = "a", target_port = 1 },', '  # between', '  { label = "b", targt_port = 2 },', ']',
    ].join('\n');
    expect(lineOf(text, 'matchmaker', 'lobby_groups', '1', 'regions', '0', 'tier_nme')).toBe(9);
    expect(lineOf(text, 'matchmaker', 'lobby_groups', '0', 'regions', '0', 'region_id')).toBe(4);
    expect(lineOf(text, 'matchmaker', 'lobby_groups', '1', 'runtime', 'docker', 'ports', '1', 'targt_port')).toBe(14);
  });

  it('reads quoted keys and skips every kind of string, whatever it holds', () => {
    const text = [
      'a = """', 'max_player = 1', '[fake]', '"""', '"quoted.key" = 1', "b = '''", 'c = 2 """', "'''", "'lit' = 'x # not a comment'",
      'd = "esc \\" [x] = y"', 'e.f = 3',
    ].join('\n');
    expect(lineOf(text, 'quoted.key')).toBe(5);
    expect(lineOf(text, 'lit')).toBe(9);
    expect(lineOf(text, 'e', 'f')).toBe(11);
    expect(lineOf(text, 'max_player')).toBeUndefined();
    expect(lineOf(text, 'fake')).toBeUndefined();
    expect(lineOf(text, 'c')).toBeUndefined();
  });

  it('finds every key smol-toml reads from the sample rivet.toml, on a line that names it', () => {
    const lines = RIVET_TOML.split('\n');
    for (const path of keyPaths(parse(RIVET_TOML))) {
      const line = lineOf(RIVET_TOML, ...path);
      expect(line, path.join('.')).toBeDefined();
      expect(lines[(line ?? 0) - 1], path.join('.')).toContain(path[path.length - 1]);
    }
  });

  it('finds every key of any document smol-toml writes (tables, arrays of tables, quoted keys, nested arrays)', () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'b', '_', '-', '.', ' ', '"', "'", '#', '['), minLength: 1, maxLength: 4 });
    const document = fc.dictionary(key, fc.oneof(fc.integer(), fc.boolean(), fc.string({ maxLength: 6 }), fc.constant('x\ny = 1\n[t]')), { maxKeys: 3 });
    const tree = fc.letrec((tie) => ({
      node: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string({ maxLength: 4 }), tie('node'), fc.array(tie('node'), { maxLength: 2 }), fc.array(fc.integer(), { maxLength: 2 })), { maxKeys: 3 }),
    })).node;
    fc.assert(fc.property(fc.oneof(document, tree), (value) => {
      const text = stringify(value);
      const parsed = parse(text);
      const lines = text.split('\n');
      for (const path of keyPaths(parsed)) {
        const line = lineOf(text, ...path);
        expect(line, `${path.join(' / ')} in\n${text}`).toBeDefined();
        const last = path[path.length - 1] ?? '';
        if (/^[A-Za-z_-]+$/.test(last)) expect(lines[(line ?? 0) - 1], `${path.join(' / ')} in\n${text}`).toContain(last);
      }
    }), { numRuns: 200 });
  });
});
