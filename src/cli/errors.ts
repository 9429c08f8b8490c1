/**
 * The CLI's failures and how they print: usage mistakes exit 2, everything else 1; an API error
 * shows its code, message and each field path; a failure with a known cause (no Docker Engine, no
 * server, the wrong kind of token) says what to do; never a stack trace.
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

/** What to do about an API error whose cause is known: the wrong token, no server. */
const apiAdvice = (error: ApiError): string | undefined => {
  if (error.code === 'CLAIMS_MISSING_ENTITLEMENT' && error.message.includes('GameCloud')) {
    return 'this needs a cloud token (or the admin token): with the admin token, run `tavern token create --kind cloud --game <game>`, then pass it with --token or TAVERN_TOKEN (or run `tavern login`)';
  }
  if (error.code === 'NETWORK') return 'is the server running? Start it with `npm start` (or `tavern serve`), or point --api or TAVERN_API at it';
  return undefined;
};

/** The Docker Engine's own words for a failure, and what to do about it, when the cause is known. */
const engineAdvice = (message: string): string | undefined => {
  const socket = /connect (ENOENT|ECONNREFUSED|EACCES) (\S*docker\.sock)/.exec(message);
  if (socket?.[1] === 'EACCES') return `this user may not use the Docker Engine (${socket[2] ?? 'its socket'}): add it to the docker group (\`sudo usermod -aG docker $USER\`, then log in again), or set DOCKER_HOST`;
  if (socket !== null) return `no Docker Engine answers at ${socket[2] ?? 'its socket'} (deploy builds images with it): start it (\`sudo systemctl start docker\`), or set DOCKER_HOST to one that runs`;
  const registry = /Get "https:\/\/([^/"]+)\/v2\/[^"]*": (?:dial tcp: lookup \S+|net\/http: request canceled|dial tcp \S+: (?:i\/o timeout|connect: connection refused|connect: network is unreachable))/.exec(message);
  if (registry !== null) return `the Docker Engine cannot reach ${registry[1] ?? 'the registry'} to pull an image the Dockerfile needs (its FROM): check this machine's network, or load that image into the engine first (docker pull or docker load)`;
  const dockerfile = /Cannot locate specified Dockerfile: ?(\S+)/.exec(message);
  if (dockerfile !== null) return `there is no ${dockerfile[1] ?? 'Dockerfile'} in the project folder: set docker.dockerfile in rivet.toml to its path, relative to the folder rivet.toml is in`;
  return undefined;
};

const describe = (error: unknown): string => {
  if (error instanceof ApiError) {
    const paths = error.paths.length > 0 ? `\n  fields: ${error.paths.join(', ')}` : '';
    const advice = apiAdvice(error);
    return `${error.code}: ${error.message}${paths}${advice === undefined ? '' : `\n  ${advice}`}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  const advice = engineAdvice(message);
  return advice === undefined ? message : `${advice}\n  (${message.split('\n')[0] ?? ''})`;
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
