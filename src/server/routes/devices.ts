/**
 * Device links (wire.md §6.4, the CLI's `rivet login`): the CLI prepares a link and polls it; the
 * developer completes it for a game with a token that may access that game (Rivet's hub did this;
 * with Tavern it is one call with the admin token), and the CLI's next poll gets a cloud token.
 * Links live in the catalog's set-once settings, so every instance sees them.
 */
import { requireGame } from '../auth.js';
import type { Ctx, Handler, Services } from '../context.js';
import { fail } from '../errors.js';
import type { Router } from '../router.js';
import { object, parse, req, str, uuid } from '../validate.js';

const pendingKey = (token: string): string => `device-link:${token}`;
const doneKey = (token: string): string => `device-link-token:${token}`;

const secret = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

async function prepare(ctx: Ctx): Promise<unknown> {
  await ctx.agent();
  const { catalog, random, settings } = ctx.services;
  const id = random.uuid();
  const token = `device_link.${secret()}`;
  await catalog.putSettingIfAbsent(pendingKey(token), id);
  return {
    device_link_id: id,
    device_link_token: token,
    device_link_url: `${settings.publicOrigin}/cloud/devices/links/${id}`,
  };
}

async function linkedToken(services: Services, token: string): Promise<string | undefined> {
  return services.catalog.getSetting(doneKey(token));
}

/** The cloud token once the link is completed; with `watch_index`, waits for it (like the logs long poll). */
async function get(ctx: Ctx): Promise<unknown> {
  const token = ctx.url.searchParams.get('device_link_token');
  if (token === null || token === '') fail('API_BAD_QUERY', { name: 'device_link_token', reason: 'required' });
  const { services } = ctx;
  if ((await services.catalog.getSetting(pendingKey(token))) === undefined) fail('API_BAD_QUERY', { name: 'device_link_token', reason: 'unknown device link' });
  let cloudToken = await linkedToken(services, token);
  if (cloudToken === undefined && ctx.url.searchParams.has('watch_index')) cloudToken = await waitForLink(ctx, token);
  return { ...(cloudToken === undefined ? {} : { cloud_token: cloudToken }), watch: { index: String(services.clock.now() + 1) } };
}

function waitForLink(ctx: Ctx, token: string): Promise<string | undefined> {
  const { timers, settings } = ctx.services;
  return new Promise((resolve) => {
    let done = false;
    const cancels: (() => void)[] = [];
    const finish = (value: string | undefined): void => {
      if (done) return;
      done = true;
      for (const c of cancels) c();
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = (): void => finish(undefined);
    const poll = (): void => {
      cancels.push(timers.after(settings.logPollMs, () => {
        linkedToken(ctx.services, token).then((t) => (t === undefined ? poll() : finish(t)), () => finish(undefined));
      }));
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    cancels.push(timers.after(settings.logWatchMs, onAbort));
    poll();
  });
}

/** `POST /cloud/devices/links/complete {device_link_token, game_id}` (a token for that game, e.g. the admin token). */
async function complete(ctx: Ctx): Promise<unknown> {
  const body = parse(await ctx.body(), object({ device_link_token: req(str), game_id: req(uuid) }));
  const game = await requireGame(ctx, body.game_id);
  const { catalog, tokens } = ctx.services;
  if ((await catalog.getSetting(pendingKey(body.device_link_token))) === undefined) fail('API_BAD_QUERY', { name: 'device_link_token', reason: 'unknown device link' });
  if ((await linkedToken(ctx.services, body.device_link_token)) === undefined) {
    await catalog.putSettingIfAbsent(doneKey(body.device_link_token), await tokens.issue({ kind: 'cloud', gameId: game.id }));
  }
  return {};
}

export function registerDevices(router: Router<Handler>): void {
  router
    .add('POST', '/cloud/devices/links', prepare)
    .add('GET', '/cloud/devices/links', get)
    .add('POST', '/cloud/devices/links/complete', complete);
}
