/**
 * The server's pino logger. Secrets never reach the log: authorization headers and every field
 * named like a token are redacted wherever they appear.
 */
import { pino, type Logger as PinoLogger } from 'pino';

/** Paths pino replaces with `[redacted]`. */
export const REDACTED_PATHS: readonly string[] = [
  'authorization', 'headers.authorization', 'req.headers.authorization', '*.headers.authorization',
  'token', 'player_token', 'adminToken', 'secret', 'secret_key',
  '*.token', '*.player_token', '*.adminToken', '*.secret', '*.secret_key', '*.RIVET_TOKEN', '*.RIVET_LOBBY_TOKEN',
  'env.RIVET_TOKEN', 'env.RIVET_LOBBY_TOKEN', '*.env.RIVET_TOKEN', '*.env.RIVET_LOBBY_TOKEN',
];

/**
 * @example
 * const logger = createLogger(); logger.info({ port }, 'listening');
 */
export const createLogger = (level = process.env['LOG_LEVEL'] ?? 'info'): PinoLogger =>
  pino({ level, redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' } });
