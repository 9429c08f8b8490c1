import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { layerViolations, sourceFiles, type LayerRule } from './scan.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/**
 * Which layer may not import which (STYLE.md's layout: data flows one way). Paths are relative to
 * `src/`; a layer is its top folder. `server/main.ts` is the server's composition root (STYLE.md:
 * the composition root may import anything): it hands the simulator to the dashboard.
 */
const RULES: readonly LayerRule[] = [
  { layer: 'server', mayNotImport: ['sim'], except: ['server/main.ts'] },
  { layer: 'adapters', mayNotImport: ['server', 'services'] },
  { layer: 'core', mayImportOnly: ['core'] },
];

describe('the layers import downwards only', () => {
  const files = sourceFiles(SRC);

  it('has every layer to check', () => {
    for (const rule of RULES) expect(files.filter((f) => f.path.startsWith(`${rule.layer}/`)).length).toBeGreaterThan(10);
  });

  it.each(RULES.map((rule) => [rule.layer, rule] as const))('%s keeps its rule', (_layer, rule) => {
    expect(layerViolations(files, rule)).toEqual([]);
  });
});

describe('the layer rule', () => {
  const planted = [
    { path: 'adapters/docker/runtime.ts', text: "import { x } from '../../server/tokens.js';\nimport type { Y } from '../../io/index.js';\n" },
    { path: 'adapters/fake/runtime.ts', text: "export const later = () => import('../../services/matchmaker.js');\n" },
    { path: 'server/routes/dashboard.ts', text: "import { run } from '../../sim/world/run.js';\nimport { ok } from '../../core/result.js';\n" },
    { path: 'server/main.ts', text: "import { builtinSimulator } from '../sim/dashboard.js';\n" },
    { path: 'core/lobby/flags.ts', text: "import { a } from '../world.js';\nimport type { Clock } from '../../io/index.js';\nexport * from '../../../package.json';\n" },
    { path: 'services/admit.ts', text: "import type { TokenIssuer } from '../server/tokens.js';\n" },
  ];

  it('finds a planted upward import, static, type-only, dynamic or re-exported, and nothing else', () => {
    expect(RULES.flatMap((rule) => layerViolations(planted, rule))).toEqual([
      { file: 'server/routes/dashboard.ts', line: 1, what: '../../sim/world/run.js' },
      { file: 'adapters/docker/runtime.ts', line: 1, what: '../../server/tokens.js' },
      { file: 'adapters/fake/runtime.ts', line: 1, what: '../../services/matchmaker.js' },
      { file: 'core/lobby/flags.ts', line: 2, what: '../../io/index.js' },
      { file: 'core/lobby/flags.ts', line: 3, what: '../../../package.json' },
    ]);
  });
});
