/**
 * PUT a file (or a byte range of it) to a presigned upload URL over plain HTTP, streamed from disk;
 * resolves with the answer's status. Test helper.
 *
 * @example
 * expect(await putFile(presigned.url, archive)).toBe(200);
 */
import { createReadStream, statSync } from 'node:fs';
import { request } from 'node:http';

export const putFile = (url: string, file: string, offset = 0, length = statSync(file).size - offset): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': String(length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    createReadStream(file, { start: offset, end: offset + length - 1 }).pipe(req);
  });
