/**
 * The Docker Engine the Docker tests run against (DOCKER_HOST, or /var/run/docker.sock), and
 * the rule they follow when it is missing: under CI the tests fail, elsewhere they are skipped
 * with the reason printed.
 */
import Dockerode from 'dockerode';
import { describeNeeding } from '../needs.js';

/** The engine, as dockerode finds it (DOCKER_HOST, else the local socket). */
export const docker = new Dockerode();

/**
 * Why the engine cannot be used, or undefined when it answers.
 *
 * @example
 * const problem = await dockerProblem(); // 'connect ENOENT /var/run/docker.sock' without an engine
 */
export const dockerProblem = async (): Promise<string | undefined> => {
  try {
    await docker.ping();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
};

/**
 * `describe(name, body)` when the engine answers; otherwise a failing test under CI (the engine
 * is part of CI's environment) or a skipped suite that says why.
 *
 * @example
 * describeWithDocker('build images', await dockerProblem(), () => { it('loads', async () => { … }) });
 */
export const describeWithDocker = (name: string, problem: string | undefined, body: () => void): void =>
  describeNeeding({ what: 'the Docker Engine', start: 'start dockerd' }, name, problem, body);

/**
 * Removes every image tagged in `repository` (a test's own, e.g. `tavern-test-1a2b3c4d`), by id,
 * with all its tags.
 *
 * @example
 * afterAll(() => removeRepository(repository));
 */
export const removeRepository = async (repository: string): Promise<void> => {
  const tagged = await docker.listImages({ filters: { reference: [`${repository}:*`] } });
  await Promise.all(tagged.map((i) => docker.getImage(i.Id).remove({ force: true }).catch(() => undefined)));
};

/**
 * Removes what a test's builds left in the engine, by tag, so an image another test also tagged
 * stays: each build as the Docker runtime loaded it (`tavern-build:<id>`), and the `tavern-game:`
 * tag `tavern deploy` built the same image under.
 *
 * @example
 * afterAll(() => removeBuildImages([buildId]));
 */
export const removeBuildImages = async (buildIds: readonly string[]): Promise<void> => {
  for (const id of buildIds) {
    const loaded = await docker.getImage(`tavern-build:${id}`).inspect().catch(() => undefined);
    const tags = loaded?.RepoTags?.filter((t) => t === `tavern-build:${id}` || t.startsWith('tavern-game:')) ?? [];
    for (const tag of tags) await docker.getImage(tag).remove({ force: true }).catch(() => undefined);
  }
};
