/**
 * How each command line of the documentation is covered (test/docs/commands.test.ts fails on a
 * line this table does not name, and on an entry no page has any more):
 * - `here`: test/docs/commands.test.ts runs it for real, in the page's order, in a sandbox;
 * - `test`: another test runs it; that file holds the command verbatim (or, with `argv`, the
 *   words after `tavern` as the quoted list it passes to the CLI), or reads it from the page itself;
 * - `check`: no test can run it (it needs root, changes the machine, or is the whole suite); `why`
 *   says so, and `check` verifies what can be: the paths and names it relies on.
 * Whatever the coverage, a `tavern` line is parsed by the real CLI and an `npm run` line must name
 * a script (and a benchmark, with flags it reads).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOBBY_NETWORK } from '../../src/adapters/docker/lobby-network.js';
import { parseEnv } from '../../src/server/env.js';
import { trustLine } from '../../src/server/local-tls.js';
import { ROOT } from './extract.js';

export type Coverage =
  | { readonly by: 'here' }
  | { readonly by: 'test'; readonly file: string; readonly argv?: true; readonly readsPage?: true }
  | { readonly by: 'check'; readonly why: string; readonly check: () => void };

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** Fails with `what` unless `ok`. */
const must = (ok: boolean, what: string): void => {
  if (!ok) throw new Error(what);
};

const ci = read('.ci/run');
const HELLO = 'test/examples/hello-game.test.ts';
const DEMAND = 'test/cli/demand.test.ts';
const PREVIEW = 'test/cli/preview.test.ts';
/** The README's CA file: the default data folder's local CA, which the sample-game test's certutil line reads after a real start. */
const CA_FILE = '.tavern/tls/ca.crt';

const benchmark = (why = 'a benchmark: minutes of load on a shared machine, its figures go to bench/RESULTS.md'): Coverage => ({ by: 'check', why, check: () => undefined });

/** Command line (as the page has it, comment removed) → its coverage. */
export const COVERAGE: Readonly<Record<string, Coverage>> = {
  // README: quick start.
  'npm ci && npm start': {
    by: 'check', why: "npm ci reinstalls node_modules, which CI's .ci/run does on a fresh clone; test/package/pack.test.ts runs `npm start` in the repository after it",
    check: () => {
      must(/^npm ci\b/m.test(ci), '.ci/run runs npm ci');
      must(read('test/package/pack.test.ts').includes("spawn('npm', ['start']"), 'pack.test.ts runs npm start');
    },
  },
  'npm ci && npm test': {
    by: 'check', why: 'the whole suite cannot run inside itself: .ci/run runs exactly this on a fresh clone',
    check: () => must(/^npm ci\b/m.test(ci) && /^npm test\b/m.test(ci), '.ci/run runs npm ci, then npm test'),
  },
  'sudo apt-get install docker.io haproxy': {
    by: 'check', why: 'installs system packages (root)',
    check: () => {
      must(ci.includes('packages+=(docker.io)') && ci.includes('apt-get install -y -qq haproxy'), '.ci/run installs the same packages');
      must(read('src/server/game-proxy.ts').includes('apt-get install haproxy'), "the server's own advice names the haproxy package");
    },
  },
  // README: the sample game.
  [`sudo cp ${CA_FILE} /usr/local/share/ca-certificates/tavern.crt && sudo update-ca-certificates`]: {
    by: 'check', why: "changes the system's trust store (root)",
    check: () => {
      must(trustLine(CA_FILE, true).includes(`sudo cp ${CA_FILE} /usr/local/share/ca-certificates/tavern.crt && sudo update-ca-certificates`), "the server's start-up line says the same");
      must(join(parseEnv({}).dataDir, 'tls', 'ca.crt') === CA_FILE, 'the default data folder holds the CA there');
    },
  },
  [`mkdir -p $HOME/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n tavern -i ${CA_FILE}`]: { by: 'test', file: HELLO },
  'export TAVERN_TOKEN=$(npx tavern admin token)': { by: 'test', file: HELLO },
  'npx tavern game create hello': { by: 'test', file: HELLO },
  'export TAVERN_TOKEN=$(npx tavern token create --kind cloud --game hello)': { by: 'test', file: HELLO },
  'npx tavern deploy -c examples/hello-game/rivet.toml': { by: 'test', file: HELLO },
  'npx tavern lobbies list': { by: 'test', file: HELLO },
  'npx tavern logs <lobby id>': { by: 'test', file: HELLO },
  'export PUBLIC_TOKEN=$(npx tavern token create --kind public)': { by: 'test', file: HELLO },
  [`curl -s -X POST http://127.0.0.1:8080/matchmaker/lobbies/find -H "authorization: Bearer $PUBLIC_TOKEN" -H 'content-type: application/json' -d '{"game_modes": ["default"]}'`]: { by: 'test', file: HELLO },
  // README: the CLI cheat sheet.
  'tavern login': { by: 'test', file: 'test/cli/deploy.test.ts', argv: true },
  // docs/scale-out.md: operating a Swarm.
  'tavern nodes list': { by: 'test', file: 'test/cli/nodes.test.ts', argv: true },
  'tavern nodes drain worker-2': { by: 'test', file: 'test/cli/nodes.test.ts', argv: true },
  'tavern nodes undrain worker-2': { by: 'test', file: 'test/cli/nodes.test.ts', argv: true },
  'tavern game list': { by: 'test', file: HELLO },
  'tavern namespace create qa': { by: 'test', file: HELLO },
  'tavern deploy -n staging -o matchmaker.max_players=16 --name "beta 2"': { by: 'test', file: HELLO },
  'tavern version list': { by: 'test', file: HELLO },
  'tavern version publish "beta 2" -n prod': { by: 'test', file: HELLO },
  'tavern token create --kind public -n staging': { by: 'test', file: HELLO },
  'tavern lobbies list --all': { by: 'test', file: HELLO },
  'tavern logs <lobby id> --follow': { by: 'test', file: HELLO },
  'tavern logs <lobby id> --stream std_err --all': { by: 'test', file: HELLO },
  'tavern sim cold-start --out charts': { by: 'here' },
  'tavern admin token': { by: 'test', file: HELLO },
  // CONTRIBUTING: tests.
  'npm test': { by: 'check', why: 'the whole suite cannot run inside itself: .ci/run runs it', check: () => must(/^npm test\b/m.test(ci), '.ci/run runs npm test') },
  'npx vitest run test/core': { by: 'check', why: 'a part of the suite this test belongs to', check: () => must(existsSync(join(ROOT, 'test/core')), 'test/core exists') },
  'FC_SEED=<seed> npm test': {
    by: 'check', why: 'the whole suite',
    check: () => must(read('test/setup/fast-check.ts').includes("process.env['FC_SEED']") && read('vitest.config.ts').includes('fast-check seed: FC_SEED='), 'the suite reads FC_SEED and prints the seed it uses'),
  },
  'CI=true npx vitest run test/docker': {
    by: 'check', why: 'a part of the suite (the Docker tests take minutes)',
    check: () => must(existsSync(join(ROOT, 'test/docker')) && read('test/needs.ts').includes("process.env['CI']"), 'test/docker exists and a missing service fails under CI'),
  },
  'UPDATE_GOLDEN=1 npx vitest run test/sim/golden': {
    by: 'check', why: 'rewrites committed golden files',
    check: () => must(read('test/sim/golden/golden.test.ts').includes("process.env['UPDATE_GOLDEN'] === '1'"), 'the golden test reads UPDATE_GOLDEN=1'),
  },
  'npm run screenshots': {
    by: 'check', why: 'starts a server and Chromium and rewrites a committed image; run it when the dashboard changes',
    check: () => must(readFileSync(join(ROOT, 'docs/screenshots/dashboard.png')).subarray(1, 4).toString() === 'PNG', 'docs/screenshots/dashboard.png is a PNG'),
  },
  // CONTRIBUTING: mutation testing.
  'npm run mutation': { by: 'check', why: 'about an hour of Stryker on a shared machine', check: () => must(existsSync(join(ROOT, 'test/mutation.js')), 'test/mutation.js exists') },
  'npm run mutation -- src/core/routing src/core/idle.ts': {
    by: 'check', why: 'minutes of Stryker on a shared machine',
    check: () => must(existsSync(join(ROOT, 'src/core/routing')) && existsSync(join(ROOT, 'src/core/idle.ts')), 'the paths it names exist'),
  },
  // CONTRIBUTING: benchmarks.
  'npm run bench -- routing --sizes 100,1000,10000,100000': benchmark(),
  'npm run bench -- http --rounds 3': benchmark(),
  'npm run bench -- http --servers tavern,tavern-no-demand --side-by-side --rounds 10': benchmark(),
  'npm run bench -- runtime': benchmark(),
  'npm run bench -- proxy --rounds 3 --routes 1000': benchmark(),
  'npm run bench -- cdn --seconds 4 --upload-mib 256': benchmark(),
  'npm run bench -- cdn-auth --probes 1000 --rounds 3 --cost 10': benchmark(),
  'npm run bench -- chaos --restarts 200 --stores sqlite,postgres,postgres-pair': benchmark('a benchmark: 40 minutes of kill -9 (test/storage/chaos.test.ts runs the same at 20 restarts)'),
  'npm run bench -- sim speed core': benchmark(),
  'npm run bench -- sim scale --hours 24': benchmark(),
  'npm run bench -- fidelity --minutes 10': benchmark('a benchmark: 10 minutes of real time (test/sim/fidelity.test.ts runs the same for 3)'),
  'npm run bench -- limits': benchmark(),
  'npm run bench -- tokens': benchmark(),
  'npm run bench -- images --rounds 3': benchmark(),
  // docs/security.md: the firewall rule.
  'iptables -N TAVERN-LOBBIES': firewall(),
  'iptables -A TAVERN-LOBBIES -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT': firewall(),
  'iptables -A TAVERN-LOBBIES -p tcp --dport 8080 -j ACCEPT': firewall(() => must(parseEnv({}).port === 8080, "8080 is the API's default port, where the lobby API listener answers when the API is on loopback")),
  'iptables -A TAVERN-LOBBIES -j DROP': firewall(),
  'iptables -I INPUT -i tavern-lobbies -j TAVERN-LOBBIES': firewall(() => must(LOBBY_NETWORK === 'tavern-lobbies', "tavern-lobbies is Tavern's lobby network, whose host interface has its name")),
  // docs/simulator.md.
  'npx tavern sim cold-start': { by: 'here' },
  'cp src/sim/scenario/builtin/cold-start.json my-game.json': { by: 'here' },
  'npx tavern sim my-game.json --seed 7 --out charts': { by: 'here' },
  'npx tavern sim my-game.json --json': { by: 'here' },
  'npx tavern sim my-game.json --trace my-game.jsonl': { by: 'here' },
  "npx tavern sim my-game.json --set version.matchmaker.max_players=12 --set 'infrastructure.regions[0].lobby_count_max=40'": { by: 'here' },
  [`npx tavern sim cold-start --sweep 'version.matchmaker.idle_lobbies={"min":0,"max":0},{"min":2,"max":4},{"min":4,"max":8},{"min":8,"max":12},{"min":12,"max":12}' --out charts`]: {
    by: 'test', file: 'test/sim/readme.test.ts', readsPage: true,
  },
  'npx tavern demand export -n prod --since 24h -o traffic.jsonl': { by: 'test', file: DEMAND, argv: true },
  'npx tavern sim calibrate -n prod --since 24h -o scenario.json': { by: 'test', file: DEMAND, argv: true },
  'npx tavern version preview rivet.json --json': { by: 'test', file: PREVIEW, argv: true },
  'npx tavern deploy --preview': { by: 'test', file: PREVIEW, argv: true },
  "npx tavern deploy --gate 'wait_p95<=+10%,refused<=+0.5pp,lobby_hours<=+25%'": { by: 'test', file: PREVIEW, argv: true },
  'npx tavern sim scenario.json --recorded traffic.jsonl --json': { by: 'test', file: DEMAND, argv: true },
};

/** A line of the firewall rule: it needs root and changes the host's firewall; `check` what it names. */
function firewall(check: () => void = () => undefined): Coverage {
  return { by: 'check', why: "changes the host's firewall (root)", check };
}
