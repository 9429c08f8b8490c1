/**
 * A documented `tavern …` line parsed by the real command tree (`src/cli/program.ts`) with its
 * exact flags and arguments, nothing run: every leaf command's action is replaced by one that
 * records the command it reached, and commander's own checks (unknown options, missing or excess arguments,
 * required options, option values) decide. `sim`'s own words (commander passes them through) are
 * parsed with the options `tavern sim` and `tavern sim calibrate` take.
 */
import { parseArgs } from 'node:util';
import { CommanderError, type Command } from 'commander';
import { CALIBRATE_OPTIONS } from '../../src/cli/demand.js';
import { createProgram } from '../../src/cli/program.js';
import { SIM_OPTIONS } from '../../src/sim/cli.js';

const silent = { cwd: '/', env: {}, out: () => undefined, err: () => undefined };

/** Every command of the tree, the root first. */
const commandsOf = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(commandsOf)];

/** The full name of a command: `token create`. */
const fullName = (cmd: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent != null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/**
 * Parses `args` (the words after `tavern`); resolves to the command it reached, or the error
 * commander reported.
 *
 * @example
 * await parseTavern(['token', 'create', '--kind', 'public']); // { command: 'token create' }
 * await parseTavern(['logs', 'x', '--folow']); // { error: "error: unknown option '--folow'…" }
 */
export async function parseTavern(args: readonly string[]): Promise<{ readonly command?: string; readonly error?: string }> {
  const program = createProgram(silent);
  let reached: string | undefined;
  for (const cmd of commandsOf(program)) {
    cmd.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    if (cmd.commands.length > 0) continue;
    cmd.action(() => {
      reached = fullName(cmd);
    });
  }
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return { command: args.join(' ') };
    return { error: e.message };
  }
  if (reached === undefined) return { error: `tavern ${args.join(' ')} reached no command` };
  if (reached !== 'sim') return { command: reached };
  const simError = simArgsError(args.slice(args.indexOf('sim') + 1));
  return simError === undefined ? { command: reached } : { error: simError };
}

/** Why `tavern sim` (or `tavern sim calibrate`) would refuse these words, or undefined. */
function simArgsError(args: readonly string[]): string | undefined {
  try {
    if (args[0] === 'calibrate') {
      const { values } = parseArgs({ args: args.slice(1), options: CALIBRATE_OPTIONS });
      return values.out === undefined && values.help !== true ? 'tavern sim calibrate needs -o' : undefined;
    }
    const { positionals, values } = parseArgs({ args: [...args], allowPositionals: true, options: SIM_OPTIONS });
    return positionals.length === 1 || values.help === true ? undefined : `tavern sim takes one scenario, got ${positionals.length}`;
  } catch (e) {
    return (e as Error).message;
  }
}
