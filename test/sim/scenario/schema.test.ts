import { describe, expect, it } from 'vitest';
import schema from '../../../src/sim/scenario/scenario.schema.json' with { type: 'json' };
import { INFRASTRUCTURE_KEYS, INFRASTRUCTURE_REGION_KEYS, OUTAGE_KEYS } from '../../../src/sim/scenario/parse-infrastructure.js';
import { MIX_KEYS, REGION_DEMAND_KEYS } from '../../../src/sim/scenario/parse-demand.js';
import { SCENARIO_KEYS } from '../../../src/sim/scenario/parse.js';
import { BUILTIN_NAMES, builtinScenarioJson } from '../../../src/sim/scenario/builtin.js';

type Node = { readonly properties?: Readonly<Record<string, Node>>; readonly $ref?: string; readonly additionalProperties?: Node | boolean };

const defs = (schema as { $defs: Readonly<Record<string, Node>> }).$defs;
const deref = (node: Node | undefined): Node => {
  const name = node?.$ref?.replace('#/$defs/', '');
  const target = name === undefined ? node : defs[name];
  if (target === undefined) throw new Error(`dangling ${String(node?.$ref)}`);
  return target;
};
const keys = (node: Node | undefined): string[] => Object.keys(deref(node).properties ?? {}).sort();
const root = schema as Node;
const sorted = (xs: readonly string[]): string[] => [...xs].sort();

describe('scenario.schema.json', () => {
  it('is draft 2020-12', () => {
    expect((schema as { $schema: string }).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('lists exactly the members the parser reads', () => {
    expect(keys(root)).toEqual(sorted(SCENARIO_KEYS));
    const infra = root.properties?.['infrastructure'];
    expect(keys(infra)).toEqual(sorted(INFRASTRUCTURE_KEYS));
    const regionItems = (deref(infra).properties?.['regions'] as { items?: Node } | undefined)?.items;
    expect(keys(regionItems)).toEqual(sorted(INFRASTRUCTURE_REGION_KEYS));
    const outageItems = (deref(infra).properties?.['runtime_outages'] as { items?: Node } | undefined)?.items;
    expect(keys(outageItems)).toEqual(sorted(OUTAGE_KEYS));
    const byMode = root.properties?.['demand']?.additionalProperties;
    const regionDemand = typeof byMode === 'object' ? byMode.additionalProperties : undefined;
    expect(keys(typeof regionDemand === 'object' ? regionDemand : undefined)).toEqual(sorted(REGION_DEMAND_KEYS));
    expect(keys(defs['mix'])).toEqual(sorted(MIX_KEYS));
  });

  it('every $ref resolves', () => {
    const refs = JSON.stringify(schema).match(/"\$ref":"#\/\$defs\/[^"]+"/g) ?? [];
    for (const ref of refs) expect(Object.keys(defs)).toContain(ref.slice('"$ref":"#/$defs/'.length, -1));
  });

  it('the built-ins use only members the schema lists at the top level', () => {
    for (const name of BUILTIN_NAMES) {
      for (const key of Object.keys(builtinScenarioJson(name) as object)) expect(keys(root)).toContain(key);
    }
  });
});
