/**
 * Device links (wire.md §6.4, the CLI's `rivet login`; the device-links service keeps them): the
 * CLI prepares a link and polls it, the developer completes it for a game with a token that may
 * access that game (e.g. the admin token).
 */
import { completeDeviceLink, deviceLinkStatus, linkedCloudToken, prepareDeviceLink } from '../../services/device-links.js';
import { requireGame } from '../auth.js';
import type { Ctx, Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import type { Router } from '../router.js';
import { object, parse, req, str, uuid } from '../validate.js';

const secret = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

async function prepare(ctx: Ctx): Promise<unknown> {
  await ctx.agent();
  const { id, token } = await prepareDeviceLink(ctx.services, secret());
  return {
    device_link_id: id,
    device_link_token: token,
    device_link_url: `${ctx.services.settings.publicOrigin}/cloud/devices/links/${id}`,
  };
}

/** The cloud token once the link is completed; with `watch_index`, waits for it (like the logs long poll). */
async function get(ctx: Ctx): Promise<unknown> {
  const token = ctx.url.searchParams.get('device_link_token');
  if (token === null || token === '') fail('API_BAD_QUERY', { name: 'device_link_token', reason: 'required' });
  let cloudToken = unwrap(await deviceLinkStatus(ctx.services, token));
  if (cloudToken === undefined && ctx.url.searchParams.has('watch_index')) cloudToken = await waitForLink(ctx, token);
  return { ...(cloudToken === undefined ? {} : { cloud_token: cloudToken }), watch: { index: String(ctx.services.clock.now() + 1) } };
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
        linkedCloudToken(ctx.services, token).then((t) => (t === undefined ? poll() : finish(t)), () => finish(undefined));
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
  unwrap(await completeDeviceLink(ctx.services, body.device_link_token, game.id));
  return {};
}

export function registerDevices(router: Router<Handler>): void {
  router
    .add('POST', '/cloud/devices/links', prepare)
    .add('GET', '/cloud/devices/links', get)
    .add('POST', '/cloud/devices/links/complete', complete);
}
