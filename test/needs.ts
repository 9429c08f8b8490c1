/**
 * Suites that need a service of the machine (a Docker Engine, the S3 test server): run when it
 * answers; otherwise a failing test under CI (CI's environment provides it, see .ci/run) or a
 * skipped suite that says why and how to start it.
 */
import { describe, it } from 'vitest';

/** What a suite needs: its name in messages ('a Docker Engine') and how to provide it ('start dockerd'). */
export interface Need {
  readonly what: string;
  readonly start: string;
}

/**
 * `describe(name, body)` when `problem` is undefined; otherwise a failure under CI or a skip.
 *
 * @example
 * describeNeeding({ what: 'the S3 test server', start: 'run node test/s3/server.js' }, 'uploads to S3', await s3Problem(), () => { … });
 */
export const describeNeeding = (need: Need, name: string, problem: string | undefined, body: () => void): void => {
  if (problem === undefined) {
    describe(name, body);
  } else if (process.env['CI'] !== undefined) {
    describe(name, () => {
      it(`needs ${need.what}`, () => {
        throw new Error(`${need.what} is unreachable (${problem}): CI must provide it (see .ci/run)`);
      });
    });
  } else {
    console.warn(`${need.what} is unreachable (${problem}): '${name}' is SKIPPED`);
    describe.skip(`${name}: SKIPPED, ${need.what} is unreachable (${problem}); ${need.start}, or set CI to make this fail`, () => {
      it(`needs ${need.what}`, () => undefined);
    });
  }
};
