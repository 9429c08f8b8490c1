/**
 * The server's pino logger: one JSON object per line for a log collector, or readable lines with
 * colours when its output is a terminal. Secrets never reach the log: authorization headers and
 * every field named like a token are redacted wherever they appear, in both forms.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { PinoPretty } from 'pino-pretty';

/** Paths pino replaces with `[redacted]`. */
export const REDACTED_PATHS: readonly string[] = [
  'authorization', 'headers.authorization', 'req.headers.authorization', '*.headers.authorization',
  'token', 'player_token', 'adminToken', 'secret', 'secret_key',
  '*.token', '*.player_token', '*.adminToken', '*.secret', '*.secret_key', '*.RIVET_TOKEN', '*.RIVET_LOBBY_TOKEN',
  'env.RIVET_TOKEN', 'env.RIVET_LOBBY_TOKEN', '*.env.RIVET_TOKEN', '*.env.RIVET_LOBBY_TOKEN',
];

export interface LoggerOptions {
  readonly level?: string;
  /** Readable lines (time, level, message, then the fields) instead of JSON; default: when stdout is a terminal. */
  readonly pretty?: boolean;
  /** Where lines go (default stdout). */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * @example
 * const logger = createLogger(); logger.info({ port }, 'listening');
 */
export const createLogger = (options: LoggerOptions = {}): PinoLogger => {
  const settings = { level: options.level ?? process.env['LOG_LEVEL'] ?? 'info', redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' } };
  const out = options.destination;
  if (!(options.pretty ?? process.stdout.isTTY)) return out === undefined ? pino(settings) : pino(settings, out as DestinationStream);
  // Colours only on the terminal itself; pretty lines are written synchronously, as pino's own are.
  return pino(settings, PinoPretty({ destination: out ?? 1, colorize: out === undefined, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true, sync: true }));
};
