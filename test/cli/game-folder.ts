/**
 * A sample game folder as a Rivet developer has it: a `rivet.toml` shaped like the one in Rivet's
 * example game (rivet-gg/example-tanks-typescript-canvas-socketio: `[matchmaker]` with
 * `max_players`, `tier`, regions, `[matchmaker.docker]` with `dockerfile` and `ports.default`,
 * game modes, a `[cdn]` block with `build_command` and `build_output`, empty `[kv]` and
 * `[identity]`), a Dockerfile building a FROM-scratch image of Debian's static busybox running a
 * small game server (listen, `lobbies/ready`, log lines), and client files the build command
 * copies into `dist/` with a `.rivet-cdn-ignore`, and `api.txt` saying where the client finds the API
 * (the build command is given `RIVET_API_ENDPOINT`, as Rivet's CLI gave it).
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const RIVET_TOML = `# Version configuration, laid out like Rivet's example games.
[matchmaker]
\tmax_players = 32
\ttier = "basic-1d1"

[matchmaker.regions]
\tlnd-sfo = {}
\tlnd-fra = {}

[matchmaker.docker]
\tdockerfile = "Dockerfile"
\tports.default = { port = 3000 }

[matchmaker.game_modes]
\tdefault = {}

[cdn]
\tbuild_command = "mkdir -p dist && cp client/* dist/ && printf '*.map\\\\n' > dist/.rivet-cdn-ignore && printf '%s' \\"$RIVET_API_ENDPOINT\\" > dist/api.txt"
\tbuild_output = "./dist/"

[kv]

[identity]
`;

export const SERVER_SH = `# The sample game server: listen on $PORT_DEFAULT, tell the matchmaker it is ready, log.
busybox nc -ll -p "$PORT_DEFAULT" -e busybox cat &
busybox wget -q -O - --post-data='' --header "Authorization: Bearer $RIVET_TOKEN" "$RIVET_API_ENDPOINT/matchmaker/lobbies/ready" >/dev/null && echo "lobby ready" || echo "lobbies/ready failed" >&2
echo "sample game server listening on $PORT_DEFAULT"
wait
`;

export const DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
COPY server.sh /server.sh
ENV PATH=/bin
ENTRYPOINT ["/bin/busybox", "sh", "/server.sh"]
`;

export const CLIENT = {
  'index.html': '<!doctype html><title>Tanks</title><script src="app.js"></script>\n',
  'app.js': 'console.log("tanks");\n',
  'app.js.map': '{"version":3}\n',
};

/** Writes the sample game into `dir`. */
export async function writeGameFolder(dir: string): Promise<void> {
  await mkdir(join(dir, 'client'), { recursive: true });
  await copyFile('/bin/busybox', join(dir, 'busybox'));
  await writeFile(join(dir, 'server.sh'), SERVER_SH);
  await writeFile(join(dir, 'Dockerfile'), DOCKERFILE);
  await writeFile(join(dir, 'rivet.toml'), RIVET_TOML);
  await writeFile(join(dir, 'rivet.staging.toml'), '[matchmaker]\nmax_players = 8\n');
  for (const [name, text] of Object.entries(CLIENT)) await writeFile(join(dir, 'client', name), text);
}
