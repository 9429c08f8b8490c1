/**
 * Namespace tokens: public (players' finds), development (mock matchmaker, wire.md §4.3) and the
 * development-token validation of wire.md §2.5.
 */
import { validateDevelopmentPorts } from '../../core/config/index.js';
import { validationError } from '../../core/errors.js';
import { requireNamespace } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail, failWith } from '../errors.js';
import type { Router } from '../router.js';
import type { DevTokenPort } from '../../services/tokens.js';
import { isRecord, object, parse, req, text } from '../validate.js';

async function createPublicToken(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const token = await ctx.services.tokens.issue({ kind: 'namespace-public', gameId: ns.gameId, namespaceId: ns.id }, ns.nameId);
  return { token };
}

/** The `ports` map of `tokens/development` in the deprecated `lobby_ports` shape (what the rules are written for). */
const portsAsLobbyPorts = (ports: Record<string, unknown>): unknown[] =>
  Object.entries(ports).map(([label, p]) => {
    if (!isRecord(p)) return p;
    const entry: Record<string, unknown> = { label, proxy_protocol: p['protocol'] };
    if (p['port'] !== undefined && p['port'] !== null) entry['target_port'] = p['port'];
    if (p['port_range'] !== undefined && p['port_range'] !== null) entry['port_range'] = p['port_range'];
    return entry;
  });

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** A validated `lobby_ports` entry as the token carries it. */
const devPort = (p: unknown): DevTokenPort => {
  const r = isRecord(p) ? p : {};
  const range = isRecord(r['port_range']) ? r['port_range'] : undefined;
  const port = num(r['target_port']);
  const min = num(range?.['min']);
  const max = num(range?.['max']);
  return {
    label: String(r['label']),
    protocol: String(r['proxy_protocol']),
    ...(port === undefined ? {} : { port }),
    ...(min === undefined || max === undefined ? {} : { portRange: { min, max } }),
  };
};

const hostnameBody = object({ hostname: req(text(253)) });

async function createDevelopmentToken(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const raw = await ctx.body();
  const { hostname } = parse(raw, hostnameBody);
  const body = raw as Record<string, unknown>;
  const ports = body['ports'] ?? undefined;
  const lobbyPorts = body['lobby_ports'] ?? undefined;
  if (ports !== undefined && lobbyPorts !== undefined) fail('CLOUD_INVALID_CONFIG', { error: 'give either ports or lobby_ports, not both' });
  if (ports === undefined && lobbyPorts === undefined) fail('CLOUD_INVALID_CONFIG', { error: 'give ports or lobby_ports' });
  if (ports !== undefined && !isRecord(ports)) failWith(validationError([{ path: ['ports', 'invalid-type'] }]));
  const entries = ports !== undefined ? portsAsLobbyPorts(ports) : lobbyPorts;
  const problems = validateDevelopmentPorts(entries);
  if (problems.length > 0) failWith(validationError(problems));
  const grantPorts = (entries as unknown[]).map(devPort);
  const token = await ctx.services.tokens.issue(
    { kind: 'namespace-development', gameId: ns.gameId, namespaceId: ns.id, hostname, ports: grantPorts },
    ns.nameId,
  );
  return { token };
}

/** `POST .../tokens/development/validate` → `{errors: [{path}]}` (the hostname is not validated, as in Rivet). */
async function validateDevelopmentToken(ctx: Ctx): Promise<unknown> {
  await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const raw = await ctx.body();
  const lobbyPorts = isRecord(raw) ? raw['lobby_ports'] : undefined;
  return { errors: validateDevelopmentPorts(lobbyPorts).map((p) => ({ path: [...p.path] })) };
}

const NS = '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}';

export function registerNamespaceTokens(router: Router<Handler>): void {
  router
    .add('POST', `${NS}/tokens/public`, createPublicToken)
    .add('POST', `${NS}/tokens/development`, createDevelopmentToken)
    .add('POST', `${NS}/tokens/development/validate`, validateDevelopmentToken);
}
