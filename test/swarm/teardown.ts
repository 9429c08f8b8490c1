/**
 * Removing a test Swarm completely, from whatever state it is in (running, half built, crashed,
 * or left by a run that was killed): its processes, containers, mounts, folder, namespaces, links
 * and FORWARD rule; and listing what is left of it. Test helpers; root only.
 */
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { endDaemon } from './daemon.js';
import { networkLeftovers, removeNetwork, type Layout } from './network.js';
import { mountsUnder, pidsMentioning, signalAndWait, unmountUnder } from './system.js';

/**
 * Kills every process of the slot's cluster (registry, dockerds, containerds, shims; found by
 * their folder), deletes the containers runc still runs, detaches the mounts dockerd left, removes
 * the folder, then the network. Idempotent; safe on a slot that holds nothing.
 *
 * @example
 * await teardown(layout(0));
 */
export const teardown = async (l: Layout): Promise<void> => {
  await signalAndWait(await pidsMentioning(`${l.dir}/`), 'SIGKILL', 10_000);
  const entries = await readdir(l.dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isDirectory() && e.name.startsWith(`${l.bridge}-`))) await endDaemon(join(l.dir, entry.name));
  await unmountUnder(l.dir);
  await rm(l.dir, { recursive: true, force: true, maxRetries: 3 });
  await removeNetwork(l);
};

/**
 * What is left of the slot's cluster: processes, mounts, its folder, namespaces, links, FORWARD
 * rules; [] after {@link teardown}.
 *
 * @example
 * expect(await leftovers(layout(0))).toEqual([]);
 */
export const leftovers = async (l: Layout): Promise<string[]> => [
  ...(await pidsMentioning(`${l.dir}/`)).map((pid) => `process ${pid}`),
  ...(await mountsUnder(l.dir)).map((m) => `mount ${m}`),
  ...(existsSync(l.dir) ? [`folder ${l.dir}`] : []),
  ...(await networkLeftovers(l)),
];
