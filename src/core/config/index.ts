/** The version configuration: parse, validate, resolve and render (see each module). */
export type * from './types.js';
export * from './defaults.js';
export { parseVersionConfig } from './parse.js';
export { parseVersion, type ParsedVersion } from './parse-version.js';
export { renderVersionConfig } from './parse-render.js';
export { validateVersion, validateDisplayName } from './validate.js';
export { resolveVersion } from './resolve.js';
export { validateDevelopmentPorts } from './dev-ports.js';
export { checkVerificationUrl, type UrlProblem } from './validate-url.js';
export { globKey } from './validate-glob.js';
export { tierResources, type TierResources } from './tiers.js';
export { named, type Path } from './path.js';
export { HOST_NETWORK_REFUSED } from './host-network.js';
