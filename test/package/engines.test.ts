/**
 * `npm ci` on a supported Node prints no engine warnings: every package in the lockfile accepts
 * this Node (CI runs the oldest supported line). A benchmark peer that wants a newer Node lives in a
 * package of its own (bench/peers/colyseus), outside this lockfile.
 */
import { readFile } from 'node:fs/promises';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface Lock {
  readonly packages: Readonly<Record<string, { readonly engines?: { readonly node?: string } | readonly string[] }>>;
}

describe('the lockfile', () => {
  it(`holds no package whose engines refuse Node ${process.version}`, async () => {
    const lock = JSON.parse(await readFile(new URL('../../package-lock.json', import.meta.url), 'utf8')) as Lock;
    const refusing = Object.entries(lock.packages).flatMap(([name, p]) => {
      const range = Array.isArray(p.engines) ? undefined : (p.engines as { node?: string } | undefined)?.node;
      return range === undefined || semver.satisfies(process.version, range) ? [] : [`${name} wants node ${range}`];
    });
    expect(refusing).toEqual([]);
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });
});
