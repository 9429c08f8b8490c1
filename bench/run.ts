/**
 * `npm run bench -- <name> [--json] [--sizes 100,1000]`: runs one benchmark, prints its table (or
 * one JSON object with --json). Each benchmark measures its baselines in the same run.
 *
 * Only the chosen benchmark's module is loaded: the http benchmark's load generator runs in this
 * process, and every megabyte of unrelated live heap here lengthens its own collections, which
 * its latency figures would count (loading the other two benchmarks and Colyseus added ~17 MB and
 * moved Tavern's p99 at 64 clients from ~10 ms to ~13.7 ms).
 */
type Bench = (args: readonly string[]) => Promise<void>;

const benches: Record<string, () => Promise<Bench>> = {
  cdn: async () => (await import('./cdn.js')).cdnBench,
  'cdn-auth': async () => (await import('./cdn-auth.js')).cdnAuthBench,
  chaos: async () => (await import('./chaos.js')).chaosBench,
  fidelity: async () => (await import('./fidelity.js')).fidelityBench,
  http: async () => (await import('./http.js')).httpBench,
  images: async () => (await import('./images.js')).imagesBench,
  limits: async () => (await import('./limits.js')).limitsBench,
  preview: async () => (await import('./preview.js')).previewBench,
  profile: async () => (await import('./profile.js')).profileBench,
  proxy: async () => (await import('./proxy.js')).proxyBench,
  tokens: async () => (await import('./tokens.js')).tokensBench,
  routing: async () => (await import('./routing.js')).routingBench,
  runtime: async () => (await import('./runtime.js')).runtimeBench,
  sim: async () => (await import('./sim.js')).simBench,
  swarm: async () => (await import('./swarm.js')).swarmBench,
};

const [name, ...args] = process.argv.slice(2);
const bench = name === undefined ? undefined : benches[name];
if (bench === undefined) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [--json]\n`);
  process.exit(2);
}
await (await bench())(args);
