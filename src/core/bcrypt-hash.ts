/**
 * The bcrypt hashes a CDN auth user may have (wire.md §6.3): `$2a$`, `$2b$` or `$2y$`, and a cost
 * Tavern bounds. A check costs 2^cost rounds (bcryptjs on a busy 2-core machine: about 0.1 s at
 * cost 10, 0.4 s at 12, days at 31) and a visitor's first request with a password pays one, so
 * one table serves the API's refusal of a hash and the CDN's refusal to check one stored before
 * the cap.
 */

/** The costs accepted: 4 is bcrypt's least; above 12 a single check takes most of a second. */
export const BCRYPT_COST = Object.freeze({ min: 4, max: 12 });

const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/**
 * A bcrypt hash's cost, or undefined when the text is not a bcrypt hash.
 *
 * @example
 * bcryptCost('$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy') // 10
 * bcryptCost('hunter2') // undefined
 */
export function bcryptCost(hash: string): number | undefined {
  const m = BCRYPT_HASH.exec(hash);
  return m === null ? undefined : Number(m[1]);
}

/**
 * Whether the CDN may check a password against `hash`: a bcrypt hash of a cost in {@link BCRYPT_COST}.
 *
 * @example
 * checkableHash('$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy') // true
 * checkableHash('$2b$31$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy') // false
 */
export function checkableHash(hash: string): boolean {
  const cost = bcryptCost(hash);
  return cost !== undefined && cost >= BCRYPT_COST.min && cost <= BCRYPT_COST.max;
}
