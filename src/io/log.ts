/**
 * The operator's log, as the code that writes to it needs it: fields first, then words (pino's
 * calling convention; the server passes its pino logger, tests a recorder or a silent one).
 *
 * @example
 * const QUIET: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
 * log.warn({ pid }, 'stopping a game proxy (haproxy) left running by an earlier Tavern');
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** Detail an operator turns on when looking into something; a log without it drops these lines. */
  debug?(obj: object, msg?: string): void;
}
