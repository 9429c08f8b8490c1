/**
 * The `tavern` command: `tavern sim ...` runs the simulator (`src/sim/cli.ts`).
 */
import { simCommand, SIM_USAGE } from '../sim/cli.js';

const USAGE = `usage: tavern <command> [args]
commands:
  sim    run a matchmaking scenario on virtual time (tavern sim --help)

${SIM_USAGE}`;

const [command, ...rest] = process.argv.slice(2);
const io = {
  stdout: (text: string) => void process.stdout.write(`${text}\n`),
  stderr: (text: string) => void process.stderr.write(text),
  tty: process.stderr.isTTY,
  cwd: process.cwd(),
  now: () => performance.now(),
};

if (command === 'sim') {
  process.exitCode = await simCommand(rest, io);
} else if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
  io.stdout(USAGE);
  process.exitCode = command === undefined ? 2 : 0;
} else {
  io.stderr(`unknown command ${command}\n\n${USAGE}\n`);
  process.exitCode = 2;
}
