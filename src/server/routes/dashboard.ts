/**
 * The dashboard (`/dashboard`, and `/` sends a browser there): static files from the package's `src/dashboard/` folder (plain HTML,
 * CSS and a few ES modules, no build step, nothing fetched from elsewhere), and `POST /dashboard/sim`
 * running a built-in simulator scenario for its charts through the simulator the composition root
 * hands in (any cloud or admin token; at most an hour of virtual time, so one run costs the server
 * well under a second; no simulator: 404).
 */
import { readFile } from 'node:fs/promises';
import { requireAgent } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import type { Outgoing } from '../incoming.js';
import type { Router } from '../router.js';
import { int, object, parse, req, str } from '../validate.js';

/** A handler's answer that is not JSON (the app sends it as it is). */
export class RawAnswer {
  readonly answer: Outgoing;

  constructor(answer: Outgoing) {
    this.answer = answer;
  }
}

/** Both `src/server/routes/` and `dist/server/routes/` sit three levels below the package root, which ships `src/dashboard/`. */
const DIR = new URL('../../../src/dashboard/', import.meta.url);
/** Every file the dashboard serves, with its content type (test/server/dashboard.test.ts checks it lists each .html, .js and .css of the folder). */
export const DASHBOARD_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'access.js': 'text/javascript; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'charts.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'lobby.js': 'text/javascript; charset=utf-8',
  'preview.js': 'text/javascript; charset=utf-8',
  'versions.js': 'text/javascript; charset=utf-8',
  'words.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async function serve(name: string): Promise<RawAnswer> {
  const type = DASHBOARD_FILES[name];
  if (type === undefined) return fail('API_NOT_FOUND', { method: 'GET', path: `/dashboard/${name}`.slice(0, 256) });
  const body = await readFile(new URL(name, DIR), 'utf8');
  return new RawAnswer({ status: 200, headers: { 'content-type': type, 'content-security-policy': CSP, 'cache-control': 'no-cache' }, body });
}

const simBody = object({ scenario: req(str), minutes: req(int(1, 60)) });

async function sim(ctx: Ctx): Promise<unknown> {
  const agent = await requireAgent(ctx);
  if (agent.kind !== 'admin' && agent.kind !== 'cloud') fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement: 'GameCloud' });
  const body = parse(await ctx.body(), simBody);
  const { simulator } = ctx.services;
  if (simulator === undefined) return fail('API_NOT_FOUND', { method: 'POST', path: '/dashboard/sim' });
  return unwrap(await simulator.runBuiltin(body.scenario, body.minutes));
}

/** `GET /`: a person who opens the server's address in a browser lands on the dashboard. */
const toDashboard = (): Promise<RawAnswer> =>
  Promise.resolve(new RawAnswer({ status: 302, headers: { location: '/dashboard', 'content-type': 'text/plain; charset=utf-8' }, body: 'The dashboard is at /dashboard\n' }));

export function registerDashboard(router: Router<Handler>): void {
  router
    .add('GET', '/', toDashboard)
    .add('GET', '/dashboard', () => serve('index.html'))
    .add('GET', '/dashboard/{file}', (ctx) => serve(param(ctx, 'file')))
    .add('POST', '/dashboard/sim', sim);
}
