/**
 * The cluster's nodes, for the operator (a Tavern extension; the admin token only): `GET
 * /admin/nodes` lists each with its region, state, drain and Tavern lobbies; `POST
 * /admin/nodes/{node}/drain` keeps new lobbies off a node (its running ones finish) and
 * `…/undrain` lifts that. `{node}` is a node's name or id. A server whose runtime has no nodes
 * answers 501 `NODES_NOT_SUPPORTED`, an unknown node 404 `NODE_NOT_FOUND`, a manager that does not
 * answer 503 `CLUSTER_UNAVAILABLE`.
 */
import type { ClusterNode, ClusterNodes } from '../../io/runtime.js';
import { requireAdmin } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail } from '../errors.js';
import type { Router } from '../router.js';

/** A node as the API gives it (snake_case). */
const nodeJson = (n: ClusterNode): Record<string, unknown> => ({
  node_id: n.id, name: n.name, region: n.region ?? null, address: n.address ?? null, state: n.state, availability: n.availability,
  drained: n.drained, hardened: n.hardened, accepting: n.accepting, lobbies: n.lobbies,
});

const nodesOf = async (ctx: Ctx): Promise<ClusterNodes> => {
  await requireAdmin(ctx);
  const nodes = ctx.services.nodes;
  if (nodes === undefined) fail('NODES_NOT_SUPPORTED');
  return nodes;
};

/** `work`, with a manager that did not answer turned into 503 `CLUSTER_UNAVAILABLE`. */
const asked = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    return fail('CLUSTER_UNAVAILABLE', { reason: error instanceof Error ? error.message : String(error) });
  }
};

const setDrain = (drained: boolean) => async (ctx: Ctx): Promise<unknown> => {
  const nodes = await nodesOf(ctx);
  const name = param(ctx, 'node');
  const node = await asked(() => nodes.setDrain(name, drained));
  if (node === undefined) fail('NODE_NOT_FOUND', { node: name.slice(0, 256) });
  ctx.services.logger.info({ node: node.name, drained }, drained ? 'node drained: no new lobby is placed there, its running lobbies finish' : 'node undrained: lobbies are placed there again');
  return { node: nodeJson(node) };
};

/**
 * @example
 * registerNodes(router); // GET /admin/nodes, POST /admin/nodes/{node}/drain, POST /admin/nodes/{node}/undrain
 */
export function registerNodes(router: Router<Handler>): void {
  router
    .add('GET', '/admin/nodes', async (ctx) => {
      const nodes = await nodesOf(ctx);
      return { nodes: (await asked(() => nodes.list())).map(nodeJson) };
    })
    .add('POST', '/admin/nodes/{node}/drain', setDrain(true))
    .add('POST', '/admin/nodes/{node}/undrain', setDrain(false));
}
