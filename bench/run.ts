/**
 * `npm run bench -- <name> [--json] [--sizes 100,1000]`: runs one benchmark, prints its table (or
 * one JSON object with --json). Each benchmark measures its baselines in the same run.
 */
import { httpBench } from './http.js';
import { routingBench } from './routing.js';
import { simBench } from './sim.js';

const benches: Record<string, (args: readonly string[]) => Promise<void>> = {
  http: httpBench,
  routing: routingBench,
  sim: simBench,
};

const [name, ...args] = process.argv.slice(2);
const bench = name === undefined ? undefined : benches[name];
if (bench === undefined) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [--json]\n`);
  process.exit(2);
}
await bench(args);
