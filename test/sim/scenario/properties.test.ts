import fc from 'fast-check';
import { describe, it } from 'vitest';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import { applyOverrides } from '../../../src/sim/scenario/overrides.js';
import { parseRecordedDemand } from '../../../src/sim/scenario/recorded.js';
import type { Problem } from '../../../src/core/config/types.js';
import { minimal } from './fixtures.js';

const wellFormed = (problems: readonly Problem[]): boolean =>
  problems.length > 0 && problems.every((p) => p.path.length > 0 && p.path.every((s) => typeof s === 'string' && s.length > 0));

describe('properties', () => {
  it('parseScenario never throws on JSON values and reports non-empty paths', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const r = parseScenario(value);
      return r.ok || wellFormed(r.error);
    }));
  });

  it('parseScenario never throws on anything', () => {
    fc.assert(fc.property(fc.anything(), (value) => {
      const r = parseScenario(value);
      return r.ok || wellFormed(r.error);
    }));
  });

  it('parseScenario never throws when one member of a valid scenario is replaced', () => {
    const targets = ['seed', 'duration_ms', 'version', 'demand', 'infrastructure', 'demand.default.eu', 'demand.default.eu.arrivals',
      'demand.default.eu.party_size', 'demand.default.eu.mix', 'demand.default.eu.session_ms', 'infrastructure.regions[0]',
      'infrastructure.regions[0].lobby_start_delay_ms', 'demand.default.eu.party_size.weights'];
    fc.assert(fc.property(fc.constantFrom(...targets), fc.jsonValue(), (target, value) => {
      const edited = applyOverrides(minimal(), [`${target}=${JSON.stringify(value)}`]);
      if (!edited.ok) return true;
      const r = parseScenario(edited.value);
      return r.ok || wellFormed(r.error);
    }));
  });

  it('parseRecordedDemand never throws and names lines', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)))), (lines) => {
      const r = parseRecordedDemand(lines.join('\n'));
      return r.ok || r.error.every((p) => p.path[0] === 'line' && /^[1-9]\d*$/.test(p.path[1] ?? ''));
    }));
  });

  it('applyOverrides never throws and never pollutes prototypes', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.array(fc.string()), (json, sets) => {
      applyOverrides(json, sets);
      return ({} as Record<string, unknown>)['polluted'] === undefined;
    }));
  });
});
