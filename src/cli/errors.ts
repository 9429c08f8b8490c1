/**
 * The CLI's failures and how they print: usage mistakes exit 2, everything else 1; an API error
 * shows its code, message and each field path; never a stack trace.
 */
import { ApiError } from './api.js';

/** The command line itself is wrong (exit code 2). */
export class UsageError extends Error {}

/** A step of a command failed: `step` names it, `done` lists what was already uploaded or created. */
export class StepError extends Error {
  readonly step: string;
  readonly done: readonly string[];
  override readonly cause: unknown;

  constructor(step: string, cause: unknown, done: readonly string[]) {
    super(`${step} failed`);
    this.step = step;
    this.cause = cause;
    this.done = done;
  }
}

const describe = (error: unknown): string => {
  if (error instanceof ApiError) {
    const paths = error.paths.length > 0 ? `\n  fields: ${error.paths.join(', ')}` : '';
    return `${error.code}: ${error.message}${paths}`;
  }
  return error instanceof Error ? error.message : String(error);
};

/**
 * The message for `error` (one block of text, no stack) and the exit code.
 *
 * @example
 * report(new UsageError('no token')); // { text: 'tavern: no token', code: 2 }
 */
export function report(error: unknown): { text: string; code: 1 | 2 } {
  if (error instanceof UsageError) return { text: `tavern: ${error.message}`, code: 2 };
  if (error instanceof StepError) {
    const done = error.done.length > 0 ? `\nalready done (a re-run reuses it): \n${error.done.map((d) => `  - ${d}`).join('\n')}` : '\nnothing was uploaded';
    return { text: `tavern: ${error.step} failed: ${describe(error.cause)}${done}`, code: 1 };
  }
  return { text: `tavern: ${describe(error)}`, code: 1 };
}
