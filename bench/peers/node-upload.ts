/**
 * The floor of an upload through Node's HTTP, for the `cdn` benchmark: this file is the program of
 * a child process (`node node-upload.js <dir>`), a bare `node:http` server that does what Tavern's
 * local-disk adapter does with a multipart build and nothing else: no routing, signature, catalog
 * or claim. `PUT /<file>?offset=<n>` writes its body at that offset of `<dir>/<file>` (created
 * sparse at `?size=`), gathered into 1 MiB positional `writev`s with one in flight, then
 * `fdatasync`; `POST /<file>` (completion) renames it to `<file>.done` and fsyncs the directory.
 * The gap between this server and `cp` is what moving the bytes through HTTP costs in Node; the
 * gap between Tavern and this server is Tavern's own.
 *
 * Prints `{"port":<n>}` once listening; SIGTERM closes it.
 */
import { constants } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const BATCH = 1024 * 1024;
const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: node-upload.js <dir>');

const fileOf = (url: URL): string => join(dir, url.pathname.replace(/[^a-z0-9.-]/gi, '_'));

async function receive(req: IncomingMessage, url: URL): Promise<void> {
  const handle = await open(fileOf(url), constants.O_RDWR | constants.O_CREAT, 0o644);
  try {
    const size = Number(url.searchParams.get('size') ?? 0);
    if ((await handle.stat()).size < size) await handle.truncate(size);
    let position = Number(url.searchParams.get('offset') ?? 0);
    let batch: Buffer[] = [];
    let bytes = 0;
    let writing: Promise<unknown> = Promise.resolve();
    for await (const chunk of req as AsyncIterable<Buffer>) {
      batch.push(chunk);
      bytes += chunk.byteLength;
      if (bytes < BATCH) continue;
      await writing;
      writing = handle.writev(batch, position);
      position += bytes;
      batch = [];
      bytes = 0;
    }
    await writing;
    if (bytes > 0) await handle.writev(batch, position);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

async function complete(url: URL): Promise<void> {
  await rename(fileOf(url), `${fileOf(url)}.done`);
  const d = await open(dir as string, 'r');
  await d.sync();
  await d.close();
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://upload');
  (req.method === 'PUT' ? receive(req, url) : complete(url)).then(
    () => res.end(),
    (e: unknown) => {
      res.statusCode = 500;
      res.end(String(e));
    },
  );
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.once('SIGTERM', () => server.close());
