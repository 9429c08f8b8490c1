/** Parsers of `config.cdn`, `config.engine` and `config.identity`. */
import type { CdnConfig, CdnHeader, CdnMiddleware, CdnRoute, EngineConfig, IdentityConfig } from './types.js';
import { arrayOf, emptyObject, humanText, mapOf, object, str, u32, type Parser } from './parse-reader.js';
import { defined } from './path.js';

const header: Parser<CdnHeader> = object((f) => {
  const name = f.req('name', str);
  const value = f.req('value', str);
  return name === undefined || value === undefined ? undefined : { name, value };
});

const customHeaders = object((f) => {
  const headers = f.req('headers', arrayOf(header));
  return headers && { headers };
});

const middlewareKind: Parser<CdnMiddleware['kind']> = object((f) =>
  defined<CdnMiddleware['kind']>({ customHeaders: f.opt('custom_headers', customHeaders) }),
);

const middleware: Parser<CdnMiddleware> = object((f) => {
  const kind = f.req('kind', middlewareKind);
  return kind && { kind };
});

const route: Parser<CdnRoute> = object((f) => {
  const glob = f.req('glob', str);
  const priority = f.req('priority', u32);
  const middlewares = f.req('middlewares', arrayOf(middleware));
  return glob === undefined || priority === undefined || middlewares === undefined ? undefined : { glob, priority, middlewares };
});

/** `config.cdn`. @example cdn({ site_id: 's', routes: [] }, ['config', 'cdn'], []); */
export const cdn: Parser<CdnConfig> = object((f) =>
  defined<CdnConfig>({
    buildCommand: f.opt('build_command', str),
    buildEnv: f.opt('build_env', mapOf(str)),
    buildOutput: f.opt('build_output', str),
    siteId: f.opt('site_id', str),
    routes: f.opt('routes', arrayOf(route)),
  }),
);

const gameModule = object((f) => {
  const module = f.req('game_module', str);
  return module === undefined ? undefined : { gameModule: module };
});

const godot = object((f) => defined<{ readonly gameModule?: string }>({ gameModule: f.opt('game_module', str) }));

/**
 * `config.engine`: `engine_a|b|c` (spec) or `unity|unreal|godot` (23.2), plus `html5` and
 * `custom`. `unreal`/`engine_b` and `engine_c` require `game_module`; `godot` does not.
 *
 * @example
 * engine({ engine_c: { game_module: 'm' } }, ['config', 'engine'], []); // { godot: { gameModule: 'm' } }
 */
export const engine: Parser<EngineConfig> = object((f) =>
  defined<EngineConfig>({
    custom: f.opt('custom', emptyObject),
    html5: f.opt('html5', emptyObject),
    unity: f.either('engine_a', 'unity', emptyObject),
    unreal: f.either('engine_b', 'unreal', gameModule),
    godot: f.either('engine_c', 'godot', gameModule, godot),
  }),
);

const customDisplayName = object((f) => {
  const displayName = f.req('display_name', humanText);
  return displayName === undefined ? undefined : { displayName };
});

const customAvatar = object((f) => {
  const uploadId = f.req('upload_id', str);
  return uploadId === undefined ? undefined : { uploadId };
});

/** `config.identity` (23.2). @example identity({ display_names: ['a'] }, ['config', 'identity'], []); */
export const identity: Parser<IdentityConfig> = object((f) =>
  defined<IdentityConfig>({
    displayNames: f.opt('display_names', arrayOf(humanText)),
    avatars: f.opt('avatars', arrayOf(str)),
    customDisplayNames: f.opt('custom_display_names', arrayOf(customDisplayName)),
    customAvatars: f.opt('custom_avatars', arrayOf(customAvatar)),
  }),
);
