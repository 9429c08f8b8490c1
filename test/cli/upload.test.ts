/**
 * uploadParts against a local HTTP server that records what arrives and fails on demand: byte
 * ranges land whole, several PUTs run at once (never more than asked), 5xx and dropped
 * connections are retried, a 4xx is not, and progress ends at the bytes sent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Progress } from '../../src/cli/progress.js';
import { UploadFailed, uploadParts, type PartUpload } from '../../src/cli/upload.js';

type Behaviour = (req: IncomingMessage, res: ServerResponse, attempt: number) => boolean;

let server: Server;
let origin: string;
let dir: string;
let file: string;
const received = new Map<string, Buffer>();
const attempts = new Map<string, number>();
let inFlight = 0;
let maxInFlight = 0;
let behaviour: Behaviour = () => false;
/** Answers wait until this holds (parallel PUTs then overlap for certain); by default at once. */
let releaseWhen: () => boolean = () => true;
const held: (() => void)[] = [];
const release = (): void => {
  if (releaseWhen()) for (const answer of held.splice(0)) answer();
};
const data = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-upload-'));
  file = join(dir, 'image.tar');
  await writeFile(file, data);
  server = createServer((req, res) => {
    const key = req.url ?? '';
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      held.push(() => {
        inFlight--;
        if (behaviour(req, res, attempt)) return;
        received.set(key, Buffer.concat(chunks));
        res.end();
      });
      release();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const reset = (b: Behaviour, when: () => boolean = () => true): void => {
  received.clear();
  attempts.clear();
  maxInFlight = 0;
  behaviour = b;
  releaseWhen = when;
};

const parts = (size: number): PartUpload[] =>
  Array.from({ length: Math.ceil(data.length / size) }, (_, i) => ({
    url: `${origin}/part/${i}`, file, offset: i * size, length: Math.min(size, data.length - i * size), name: `part ${i}`,
  }));

const counting = (): Progress & { sent: number } => {
  const p = { sent: 0, start: () => undefined, stop: () => undefined, add: (n: number) => void (p.sent += n) };
  return p;
};

describe('uploadParts', () => {
  it('sends each byte range whole, at most `concurrency` at once, and reports every byte', async () => {
    // Each answer waits until three PUTs are in flight (or every part has begun): a client that sent
    // fewer at once would stall here, and one that sent more shows in maxInFlight.
    reset(() => false, () => inFlight >= 3 || attempts.size === 10);
    const progress = counting();
    await uploadParts(parts(1000), { concurrency: 3, progress });
    expect(received.size).toBe(10);
    const joined = Buffer.concat([...received.entries()].sort(([a], [b]) => Number(a.split('/')[2]) - Number(b.split('/')[2])).map(([, v]) => v));
    expect(joined.equals(data)).toBe(true);
    expect(maxInFlight).toBe(3);
    expect(progress.sent).toBe(data.length);
  });

  it('retries 5xx answers and dropped connections; progress takes back the failed attempts', async () => {
    reset((req, res, attempt) => {
      if (attempt === 1 && req.url?.endsWith('/1')) {
        res.statusCode = 503;
        res.end('busy');
        return true;
      }
      if (attempt <= 2 && req.url?.endsWith('/2')) {
        req.socket.destroy();
        return true;
      }
      return false;
    });
    const progress = counting();
    await uploadParts(parts(4000), { backoffMs: 1, progress });
    expect(attempts.get('/part/1')).toBe(2);
    expect(attempts.get('/part/2')).toBe(3);
    expect(received.get('/part/2')?.length).toBe(2000);
    expect(progress.sent).toBe(data.length);
  });

  it('gives up after the retries, naming the part and the last answer; a 4xx is not retried', async () => {
    reset((_req, res) => {
      res.statusCode = 500;
      res.end('disk full');
      return true;
    });
    await expect(uploadParts(parts(10_000), { backoffMs: 1, retries: 2 })).rejects.toThrow(new UploadFailed('uploading part 0 failed after 3 attempt(s): HTTP 500 disk full'));
    expect(attempts.get('/part/0')).toBe(3);
    reset((_req, res) => {
      res.statusCode = 403;
      res.end('bad signature');
      return true;
    });
    await expect(uploadParts(parts(10_000), { backoffMs: 1 })).rejects.toThrow('failed after 1 attempt(s): HTTP 403 bad signature');
  });
});
