/**
 * The `tavern` command's tree (commander), built without running anything: `serve` runs the
 * server, `sim` the simulator, `deploy` and the cloud commands talk to a Tavern API. `main.ts`
 * parses the process's arguments with it; the docs test parses every documented command line.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import Docker from 'dockerode';
import { simCommand } from '../sim/cli.js';
import { registerAdmin } from './admin.js';
import { registerCloudCommands, apiFor, type CommandIo } from './commands.js';
import { calibrateCommand, registerDemand } from './demand.js';
import { registerNodes } from './nodes.js';
import { deploy, previewOnly } from './deploy.js';
import { previewFlags, printPreview, type DeployFlags } from './preview.js';
import { createProgress } from './progress.js';

/** This package's version (package.json is two folders up from both src/cli and dist/cli). */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The whole command tree, its actions writing through `io`; errors are left to the caller
 * (`exitOverride`: commander throws instead of exiting).
 *
 * @example
 * await createProgram(io).parseAsync(['deploy', '-n', 'staging'], { from: 'user' });
 */
export function createProgram(io: CommandIo): Command {
  const program = new Command('tavern')
    .description('Tavern: game-server hosting and matchmaking, wire-compatible with Rivet 23.2')
    .addOption(new Option('--api <origin>', 'the Tavern API (default: TAVERN_API, RIVET_API_ENDPOINT, the saved login, http://127.0.0.1:8080)'))
    .addOption(new Option('--token <token>', 'a cloud or admin token (default: TAVERN_TOKEN, RIVET_TOKEN, .tavern/cloud_token)'))
    .addOption(new Option('--game <game>', "the game's id or name (default: the cloud token's game)"))
    .version(VERSION, '-V, --version', "print Tavern's version")
    .exitOverride()
    .showHelpAfterError();

  program.command('serve').description('run the Tavern server (configured by TAVERN_* variables, see docs/configuration.md)').action(async () => {
    await import('../server/main.js');
  });

  program.command('sim').description('run a matchmaking scenario on virtual time (tavern sim --help)')
    .argument('[args...]').allowUnknownOption().helpOption(false)
    .action(async (args: string[], _o: unknown, cmd: Command) => {
      if (args[0] === 'calibrate') {
        await calibrateCommand(args.slice(1), cmd, io);
        return;
      }
      process.exitCode = await simCommand(args, {
        stdout: (text: string) => io.out(text),
        stderr: (text: string) => void process.stderr.write(text),
        tty: process.stderr.isTTY,
        cwd: io.cwd,
        now: () => performance.now(),
      });
    });

  program.command('deploy').description('build and upload the images and site of rivet.toml, create a version and publish it')
    .addHelpText('after', `
Preview before publishing (nothing built): the namespace's recorded demand replayed under the live
version and under this config, side by side (docs/simulator.md#deploy-preview):
  tavern deploy --preview [--since 7d] [--json]
Publish only if the preview holds (otherwise exit 1 with the table, nothing built):
  tavern deploy --gate 'wait_p95<=+10%,refused<=+0.5pp,lobby_hours<=+20%'`)
    .option('-n, --namespace <ns>', 'namespace to publish to (also picks the overlay rivet.<ns>.toml)', 'prod')
    .option('-c, --config <file>', 'config file (default: rivet.toml/.yaml/.json or tavern.toml in this folder)')
    .option('-o, --override <key=json...>', 'override a config value, e.g. -o matchmaker.max_players=16', [])
    .option('--name <version>', 'version name (default: the UTC time)')
    .option('--concurrency <n>', 'uploads at once (1 to 64)', (v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64) throw new InvalidArgumentError('expected a whole number from 1 to 64');
      return Number(v);
    }, 8)
    .option('--preview', 'only preview the config on recorded demand against the live version: nothing is built or published')
    .option('--gate <conditions>', "publish only if the preview holds, e.g. 'wait_p95<=+10%,refused<=+0.5pp'")
    .option('--since <duration>', "the preview's window (default 7d, or whatever is recorded)")
    .option('--seed <n>', "the preview's seed (default 1)")
    .option('--json', 'with --preview: print the preview as one JSON object')
    .action(async (options: DeployFlags, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const deployOptions = {
        namespace: options.namespace, overrides: options.override, concurrency: options.concurrency,
        ...(options.config === undefined ? {} : { configPath: options.config }),
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(globals.game === undefined ? {} : { game: globals.game }),
        ...previewFlags(options),
      };
      const deployIo = {
        cwd: io.cwd, docker: () => new Docker(), progress: createProgress(process.stderr, () => performance.now()),
        log: io.err, commandOutput: process.stderr, now: () => new Date(),
      };
      if (options.preview === true) {
        printPreview(await previewOnly(api, deployOptions, deployIo), options.json === true, io);
        return;
      }
      const result = await deploy(api, deployOptions, deployIo);
      io.out(`version ${result.versionId} is live in ${options.namespace}`);
      for (const b of result.buildIds) io.out(`build ${b}`);
      if (result.siteId !== undefined) io.out(`site ${result.siteId}`);
      if (result.cdnUrl !== undefined) io.out(`cdn ${result.cdnUrl}`);
    });

  registerCloudCommands(program, io);
  registerAdmin(program, io);
  registerDemand(program, io);
  registerNodes(program, io);
  return program;
}
