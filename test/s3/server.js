#!/usr/bin/env node
// The S3-compatible server the S3 tests and the cdn benchmark talk to: s3rver on 127.0.0.1:4569
// (credentials S3RVER/S3RVER), its objects under one directory. `.ci/run` starts it in the
// background when nothing answers there. Usage: node test/s3/server.js [directory] [port]
import { mkdirSync } from 'node:fs';
import process from 'node:process';
import S3rver from 's3rver';

const directory = process.argv[2] ?? '/tmp/tavern-s3rver';
const port = Number(process.argv[3] ?? 4569);
mkdirSync(directory, { recursive: true });
const server = new S3rver({ address: '127.0.0.1', port, directory, silent: true, vhostBuckets: false });
const { port: bound } = await server.run();
process.stdout.write(`s3rver listening on 127.0.0.1:${bound}, objects in ${directory}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
