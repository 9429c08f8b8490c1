/**
 * `tavern admin token`: the server's admin token, shown again on the server's machine. It reads
 * what the server reads (the same TAVERN_* variables and DATABASE_URL): `TAVERN_ADMIN_TOKEN` when
 * set, else the token the server generated on its first start, from its data folder's database.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { parseEnv } from '../server/env.js';
import { openStores } from '../server/stores.js';
import { ADMIN_TOKEN_SETTING } from '../services/tokens.js';
import type { CommandIo } from './commands.js';
import { UsageError } from './errors.js';

/** The admin token the server in `env` uses, or a usage error saying why there is none yet. */
async function adminToken(env: NodeJS.ProcessEnv): Promise<string> {
  const settings = parseEnv(env);
  if (settings.adminToken !== undefined) return settings.adminToken;
  // Never create a database just to read it: a server that never started has no token yet.
  if (settings.databaseUrl === undefined && !existsSync(join(settings.dataDir, 'tavern.db'))) {
    throw new UsageError(`no Tavern data in ${settings.dataDir}: the admin token is made on the server's first start (npm start); run this where the server runs, with its TAVERN_DATA_DIR`);
  }
  const stores = await openStores(settings, { warn: () => undefined });
  try {
    const token = await stores.catalog.getSetting(ADMIN_TOKEN_SETTING);
    if (token === undefined) throw new UsageError("the server has not made an admin token yet: it makes one on its first start (npm start)");
    return token;
  } finally {
    await stores.close();
  }
}

export function registerAdmin(program: Command, io: CommandIo): void {
  program.command('admin').description("operator commands, run on the server's machine").command('token')
    .description("print the server's admin token (TAVERN_ADMIN_TOKEN, or the one it generated, read from TAVERN_DATA_DIR or DATABASE_URL)")
    .action(async () => {
      io.out(await adminToken(io.env));
    });
}
