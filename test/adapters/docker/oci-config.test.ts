import { describe, expect, it } from 'vitest';
import { untagIndex, untagManifest } from '../../../src/adapters/docker/docker-archive.js';
import { imageChanges, parseBundleConfig } from '../../../src/adapters/docker/oci-config.js';

const config = (process: unknown, root?: unknown): string => JSON.stringify({ ociVersion: '1.0.2', process, ...(root === undefined ? {} : { root }) });

describe('parseBundleConfig', () => {
  it('reads the process of an OCI runtime config, with defaults for what it leaves out', () => {
    expect(parseBundleConfig(config({ args: ['/srv/game', '--port', '7777'], env: ['A=1', 'B=x=y'], cwd: '/srv', user: { uid: 1000, gid: 100 }, terminal: false }, { path: './rootfs/', readonly: true })))
      .toEqual({ args: ['/srv/game', '--port', '7777'], env: ['A=1', 'B=x=y'], cwd: '/srv', uid: 1000, gid: 100, root: 'rootfs' });
    expect(parseBundleConfig(config({ args: ['/a'] }))).toEqual({ args: ['/a'], env: [], cwd: '/', uid: 0, gid: 0, root: 'rootfs' });
  });

  it.each([
    ['{', /config.json is not valid JSON/],
    ['[1]', /must hold a JSON object/],
    [JSON.stringify({ process: 'x' }), /config.json: process must be an object/],
    [config({ args: [] }), /config.json: process.args must be a non-empty list of strings/],
    [config({ args: ['/a', 3] }), /process.args must be a non-empty list of strings/],
    [config({ args: ['/a'], env: 'A=1' }), /process.env must be a list/],
    [config({ args: ['/a'], env: ['NOEQUALS'] }), /process.env\[0\] must be a 'NAME=value' string/],
    [config({ args: ['/a'], env: ['A=1', '1BAD=x'] }), /process.env\[1\] has a name the engine cannot take: '1BAD'/],
    [config({ args: ['/a'], env: ['A=line\nUSER root'] }), /process.env\[0\] has a line break/],
    [config({ args: ['/a'], cwd: 'relative' }), /process.cwd must be an absolute path/],
    [config({ args: ['/a'], user: { uid: -1 } }), /process.user.uid must be a whole number/],
    [config({ args: ['/a'], user: { uid: 1, gid: 2 ** 32 } }), /process.user.gid must be a whole number/],
    [config({ args: ['/a'] }, { path: '../etc' }), /root.path must be a relative path inside the bundle/],
    [config({ args: ['/a'] }, { path: '/abs' }), /root.path must be a relative path/],
  ])('refuses %s, naming the field', (json, reason) => {
    expect(() => parseBundleConfig(json)).toThrow(reason);
  });
});

describe('imageChanges', () => {
  it('writes ENTRYPOINT as a JSON array and quotes ENV and WORKDIR so the engine takes them verbatim', () => {
    expect(imageChanges({ args: ['/bin/sh', '-c', 'echo "$1"'], env: ['A=$HOME "x" \\y', 'B='], cwd: '/srv/my game', uid: 1000, gid: 1000, root: 'rootfs' })).toEqual([
      'ENTRYPOINT ["/bin/sh","-c","echo \\"$1\\""]',
      'ENV A="\\$HOME \\"x\\" \\\\y"',
      'ENV B=""',
      'WORKDIR "/srv/my game"',
      'USER 1000:1000',
    ]);
  });
});

describe('untagManifest', () => {
  const hex = 'ab'.repeat(32);
  it("drops the archive's tags and names the image by its config (docker save and OCI layout forms)", () => {
    expect(untagManifest(JSON.stringify([{ Config: `${hex}.json`, RepoTags: ['tavern-build:victim', 'nginx:latest'], Layers: ['l/layer.tar'] }])))
      .toEqual({ content: JSON.stringify([{ Config: `${hex}.json`, RepoTags: [], Layers: ['l/layer.tar'] }]), id: `sha256:${hex}` });
    expect(untagManifest(JSON.stringify([{ Config: `blobs/sha256/${hex}`, RepoTags: null, Layers: [] }])).id).toBe(`sha256:${hex}`);
  });

  it.each([
    ['nope', /manifest.json is not valid JSON/],
    ['[]', /lists no image/],
    [JSON.stringify([{ Config: `${hex}.json` }, { Config: `${hex}.json` }]), /holds 2 images/],
    [JSON.stringify([{ Config: '../../etc/passwd' }]), /does not name the image config/],
  ])('refuses %s', (json, reason) => {
    expect(() => untagManifest(json)).toThrow(reason);
  });
});

describe('untagIndex', () => {
  it("drops the image-name annotations of an OCI layout's index.json and keeps the rest", () => {
    const index = { schemaVersion: 2, manifests: [{ digest: 'sha256:1', annotations: { 'io.containerd.image.name': 'docker.io/library/game:v1', 'org.opencontainers.image.ref.name': 'v1', other: 'kept' } }, { digest: 'sha256:2' }] };
    expect(JSON.parse(untagIndex(JSON.stringify(index)))).toEqual({ schemaVersion: 2, manifests: [{ digest: 'sha256:1', annotations: { other: 'kept' } }, { digest: 'sha256:2' }] });
    expect(() => untagIndex('{')).toThrow(/index.json is not valid JSON/);
  });
});
