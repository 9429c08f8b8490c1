/**
 * A namespace's custom domains (wire.md §2.7): RFC 1123 host names in lowercase (as Rivet: an
 * upper-case letter is refused, so every stored domain, and its uniqueness, is case-insensitive),
 * at most 255 characters, not Tavern's own API, job or CDN domain; at most {@link MAX_DOMAINS}
 * per namespace; unique across all namespaces. Errors carry the path `['domain']`.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { err, type Result } from '../core/result.js';
import type { DomainStore, NamespaceRecord } from '../io/catalog.js';
import type { Clock } from '../io/index.js';

export const MAX_DOMAINS = 10;

/** The wire field every domain error is about. */
/** The field a domain error is about, also in its wire body's metadata (it has none of its own). */
const AT_DOMAIN = { path: ['domain'], metadata: { path: ['domain'] } };

/** Tavern's own domains, which no namespace may claim. */
export interface OwnDomains {
  /** Where the API answers, e.g. `https://api.example.com`. */
  readonly publicOrigin: string;
  /** Lobby hostnames live under it. */
  readonly jobDomain: string;
  /** CDN sites live under it, when configured. */
  readonly cdnDomain?: string;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Why `domain` cannot be added, or undefined.
 *
 * @example
 * domainProblem('Example.com', own) // 'only lowercase a-z, 0-9, - and . are allowed'
 */
export function domainProblem(domain: string, own: OwnDomains): string | undefined {
  if (domain.length === 0) return 'empty';
  if (domain.length > 255) return 'longer than 255 characters';
  if (!/^[a-z0-9.-]+$/.test(domain)) return 'only lowercase a-z, 0-9, - and . are allowed';
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return 'not a domain name';
  const ours = [new URL(own.publicOrigin).hostname, own.cdnDomain].filter((d): d is string => d !== undefined);
  if (ours.some((d) => domain === d || domain.endsWith(`.${d}`)) || domain === own.jobDomain) return 'a Tavern domain';
  return undefined;
}

/**
 * Adds a custom domain to the namespace: `CDN_INVALID_DOMAIN` (with the reason),
 * `CDN_TOO_MANY_DOMAINS`, `CLOUD_HOSTNAME_TAKEN` (another namespace has it), or
 * `NAMESPACE_NOT_FOUND` when the namespace went away.
 *
 * @effects catalog (addDomain), clock
 * @example
 * const r = await addDomain({ catalog, clock, settings }, ns, 'play.example.com');
 */
export async function addDomain(
  deps: { readonly catalog: DomainStore; readonly clock: Clock; readonly settings: OwnDomains },
  ns: NamespaceRecord,
  domain: string,
): Promise<Result<NamespaceRecord, MatchError>> {
  const problem = domainProblem(domain, deps.settings);
  if (problem !== undefined) return err(matchError('CDN_INVALID_DOMAIN', { reason: problem }, AT_DOMAIN));
  if (ns.domains.length >= MAX_DOMAINS) return err(matchError('CDN_TOO_MANY_DOMAINS', { max: MAX_DOMAINS }, AT_DOMAIN));
  const added = await deps.catalog.addDomain(ns.id, { domain, createdAt: deps.clock.now() });
  if (added === undefined) return err(matchError('NAMESPACE_NOT_FOUND'));
  return added.ok ? added : err(matchError('CLOUD_HOSTNAME_TAKEN', undefined, AT_DOMAIN));
}

/**
 * Removes a custom domain (in any case) from the namespace; nothing happens if it has no such domain.
 *
 * @effects catalog (removeDomain)
 * @example
 * await removeDomain({ catalog }, ns.id, 'Play.Example.com');
 */
export async function removeDomain(deps: { readonly catalog: DomainStore }, namespaceId: string, domain: string): Promise<void> {
  await deps.catalog.removeDomain(namespaceId, domain.toLowerCase());
}
