/**
 * The Docker Engine's failures in words a game developer reads in a lobby's log: an engine that
 * cannot be reached, a port some other program holds, a missing image, a full disk.
 */

interface EngineError {
  readonly statusCode?: number;
  readonly code?: string;
  readonly address?: string;
  readonly json?: { readonly message?: string } | null;
  readonly reason?: string;
  readonly message?: string;
}

const asEngineError = (e: unknown): EngineError => (typeof e === 'object' && e !== null ? (e) : {});

/**
 * Whether the engine answered with this HTTP status.
 *
 * @example
 * if (isStatus(error, 404)) return; // already gone
 */
export const isStatus = (error: unknown, status: number): boolean => asEngineError(error).statusCode === status;

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * One line that says what went wrong.
 *
 * @example
 * describeEngineError({ code: 'ENOENT', address: '/var/run/docker.sock' });
 * // 'the Docker engine is unreachable (ENOENT /var/run/docker.sock)'
 */
export const describeEngineError = (error: unknown): string => {
  const e = asEngineError(error);
  if (e.code !== undefined && UNREACHABLE.has(e.code)) return `the Docker engine is unreachable (${e.code}${e.address === undefined ? '' : ` ${e.address}`})`;
  const detail = e.json?.message ?? (error instanceof Error ? error.message : String(error));
  const port = /(?:Bind for [^ ]*?:(\d+) failed: port is already allocated|listen (?:tcp|udp)[46]? [^ ]*?:(\d+): bind: address already in use)/.exec(detail);
  if (port !== null) return `host port ${port[1] ?? port[2]} is already in use by another program (${detail})`;
  if (/no space left on device/i.test(detail)) return `the Docker engine's disk is full (${detail})`;
  if (e.statusCode === 404 && /image/i.test(detail)) return `the build's image is missing from the Docker engine (${detail})`;
  if (e.statusCode !== undefined) return `the Docker engine refused: ${detail} (HTTP ${e.statusCode})`;
  return detail;
};
