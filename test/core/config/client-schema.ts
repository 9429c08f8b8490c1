/**
 * Samples built from the `@rivet-gg/api@23.2.0-rc1` client's own serialization types (its `.d.ts`
 * `Raw` interfaces, the wire shapes it sends), read with the TypeScript compiler: every property
 * of every nested object present, maps with one entry, lists with one item, enumerations at their
 * first value. Also the option names of Docker Engine's HostConfig, from @types/dockerode.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const require = createRequire(import.meta.url);
// The package's main file is dist/node/index.js; its types sit beside dist.
const CLIENT_TYPES = join(dirname(require.resolve('@rivet-gg/api')), '..', '..', 'types', 'serialization');

/** A sample of `type`, and every property name met on the way (with its dotted path). */
function sampler(checker: ts.TypeChecker, keys: string[]): (type: ts.Type, at: string) => unknown {
  const sample = (raw: ts.Type, at: string): unknown => {
    const type = checker.getNonNullableType(raw);
    if (type.flags & ts.TypeFlags.BooleanLike) return true;
    if (type.flags & ts.TypeFlags.NumberLike) return 1;
    if (type.isStringLiteral()) return type.value;
    if (type.flags & ts.TypeFlags.String) return 'x';
    if (type.isUnion()) {
      const first = type.types.find((t) => t.isStringLiteral());
      if (first?.isStringLiteral()) return first.value;
      throw new Error(`${at}: a union that is not an enumeration`);
    }
    if (checker.isArrayType(type)) {
      const [item] = checker.getTypeArguments(type as ts.TypeReference);
      if (item === undefined) throw new Error(`${at}: an array of nothing`);
      return [sample(item, `${at}.0`)];
    }
    const props = checker.getPropertiesOfType(type);
    const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
    if (index !== undefined && props.length === 0) return { k: sample(index.type, `${at}.k`) };
    const out: Record<string, unknown> = {};
    for (const prop of props) {
      keys.push(`${at}.${prop.name}`);
      out[prop.name] = sample(checker.getTypeOfSymbol(prop), `${at}.${prop.name}`);
    }
    return out;
  };
  return sample;
}

/** The declared type of `namespace.name` (e.g. `Config.Raw`) in `file`. */
function declaredType(program: ts.Program, file: string, path: readonly string[]): ts.Type {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`cannot read ${file}`);
  let symbol = checker.getSymbolAtLocation(source);
  for (const name of path) {
    const next: ts.Symbol | undefined = symbol === undefined ? undefined : checker.getExportsOfModule(symbol).find((s) => s.name === name)
      ?? symbol.exports?.get(name as ts.__String);
    if (next === undefined) throw new Error(`${file}: no ${path.join('.')}`);
    symbol = next;
  }
  if (symbol === undefined) throw new Error(`${file}: no module symbol`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

export interface Schemas {
  /** A version config carrying every key of the client's `cloud.version.Config.Raw`, and those keys (dotted paths). */
  readonly clientVersionConfig: () => { readonly config: unknown; readonly keys: readonly string[] };
  /** The option names of Docker Engine's `HostConfig` (as @types/dockerode declares it). */
  readonly hostConfigKeys: () => readonly string[];
}

/**
 * Reads both declaration files in one compiler program (a program costs seconds).
 *
 * @example
 * const { config, keys } = loadSchemas().clientVersionConfig(); // keys: ['config.engine', 'config.engine.unity', …]
 */
export function loadSchemas(): Schemas {
  const client = join(CLIENT_TYPES, 'resources', 'cloud', 'resources', 'version', 'types', 'Config.d.ts');
  const docker = require.resolve('@types/dockerode/index.d.ts');
  const program = ts.createProgram([client, docker], { noEmit: true, skipLibCheck: true, strict: true, types: [], lib: ['lib.es5.d.ts'] });
  const checker = program.getTypeChecker();
  return {
    clientVersionConfig: () => {
      const keys: string[] = [];
      const config = sampler(checker, keys)(declaredType(program, client, ['Config', 'Raw']), 'config');
      return { config, keys };
    },
    hostConfigKeys: () => checker.getPropertiesOfType(declaredType(program, docker, ['HostConfig'])).map((p) => p.name),
  };
}
