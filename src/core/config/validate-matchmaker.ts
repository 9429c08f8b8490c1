/**
 * Validation of `config.matchmaker`: every inheritable setting is checked once where it is written
 * (matchmaker level or game-mode level), then each game mode's cascaded view is checked for what
 * only exists after the cascade (at least one region, a runtime with a build, env collisions).
 */
import type { IdleLobbies, InheritedModeSettings, MatchmakerConfig, Problem, ValidationContext } from './types.js';
import { LIMITS, TIER_CATALOGUE } from './defaults.js';
import { explained, named, problem, type Path } from './path.js';
import { validateCaptcha } from './validate-captcha.js';
import { validateContainer, validateEffectiveContainer } from './validate-container.js';
import { isIdent } from './validate-text.js';
import { validateActions } from './validate-verification.js';

function validateIdle(idle: IdleLobbies | undefined, at: Path, out: Problem[]): void {
  if (idle === undefined) return;
  if (idle.min > idle.max) out.push(problem(at, 'idle-lobbies', 'min-gt-max'));
  if (idle.min > LIMITS.idleMin) out.push(problem(at, 'idle-lobbies', 'min-too-high'));
  if (idle.max > LIMITS.idleMax) out.push(problem(at, 'idle-lobbies', 'max-too-high'));
}

function validateTier(tier: string | undefined, at: Path, ctx: ValidationContext, out: Problem[]): void {
  if (tier === undefined) return;
  const known = ctx.tiers?.has(tier) ?? TIER_CATALOGUE.includes(tier);
  if (!known) out.push(problem(at, 'tier', 'not-found'));
}

function validateMaxPlayers(settings: InheritedModeSettings, at: Path, out: Problem[]): void {
  const counts = [
    ['max-players', settings.maxPlayers],
    ['max-players-direct', settings.maxPlayersDirect],
    ['max-players-party', settings.maxPlayersParty],
  ] as const;
  for (const [segment, count] of counts) {
    if (count !== undefined && count < 1) out.push(problem(at, segment, 'too-low'));
    if (count !== undefined && count > LIMITS.maxPlayers) out.push(problem(at, segment, 'too-high'));
  }
}

/**
 * What an unknown region's problem says: the regions this server runs, and how an operator adds one.
 *
 * @example
 * unknownRegion('lnd-atl', new Set(['local'])); // 'this server has no region lnd-atl; it runs: local (an operator adds regions with TAVERN_REGIONS)'
 */
export const unknownRegion = (name: string, regions: ReadonlySet<string>): string =>
  `this server has no region ${name}; it runs: ${[...regions].join(', ') || 'none'} (an operator adds regions with TAVERN_REGIONS)`;

/** Checks the settings written at `at`, whoever inherits them. */
function validateWritten(settings: InheritedModeSettings, at: Path, ctx: ValidationContext, out: Problem[]): void {
  for (const [name, region] of Object.entries(settings.regions ?? {})) {
    const regionAt = [...at, 'regions', named(name)];
    if (!ctx.regions.has(name)) out.push(explained(regionAt, unknownRegion(name, ctx.regions), 'not-found'));
    validateTier(region.tier, regionAt, ctx, out);
    validateIdle(region.idleLobbies, regionAt, out);
  }
  validateTier(settings.tier, at, ctx, out);
  validateIdle(settings.idleLobbies, at, out);
  validateMaxPlayers(settings, at, out);
  if (settings.container !== undefined) validateContainer(settings.container, at, ctx, out);
  validateActions(settings.actions, at, out, ctx.verificationHostsAllowed);
}

/**
 * Validates the matchmaker block: captcha, 1–32 game modes (`game-modes-meta.too-few|too-many`),
 * mode names are idents (`*name*.name-id-invalid`), regions known (`regions.*r*.not-found`), tiers
 * known (`tier.not-found`), idle lobbies (`idle-lobbies.min-gt-max|min-too-high|max-too-high`), max
 * players 1–256 (`max-players[-direct|-party].too-low|too-high`), containers and verification;
 * after the cascade each mode needs a region (`regions-meta.too-few`) and a runtime with a build.
 *
 * @example
 * validateMatchmaker({ gameModes: {} }, ctx, out); // out: [['config', 'matchmaker', 'game-modes-meta', 'too-few']]
 */
export function validateMatchmaker(mm: MatchmakerConfig, ctx: ValidationContext, out: Problem[]): void {
  const base = ['config', 'matchmaker'];
  validateCaptcha(mm.captcha, out);
  validateWritten(mm, base, ctx, out);
  const modes = Object.entries(mm.gameModes ?? {});
  if (modes.length === 0) out.push(problem(base, 'game-modes-meta', 'too-few'));
  if (modes.length > LIMITS.gameModes) out.push(problem(base, 'game-modes-meta', 'too-many'));
  for (const [name, mode] of modes) {
    const at = [...base, 'game-modes', named(name)];
    if (!isIdent(name)) out.push(problem(at, 'name-id-invalid'));
    validateWritten(mode, at, ctx, out);
    const regionsOwner = mode.regions ? at : mm.regions ? base : at;
    if (Object.keys(mode.regions ?? mm.regions ?? {}).length === 0) out.push(problem(regionsOwner, 'regions-meta', 'too-few'));
    validateEffectiveContainer(mode, at, mm, out);
  }
}
