#!/usr/bin/env -S node --max-semi-space-size=64
/**
 * The `tavern` command: parses the process's arguments with the command tree of `program.ts`.
 * Exit codes: 0 ok, 1 failed, 2 usage.
 */
import { CommanderError } from 'commander';
import type { CommandIo } from './commands.js';
import { report } from './errors.js';
import { createProgram } from './program.js';

// A reader that stops early (`tavern version list | head -1`) closes the pipe: that ends the command quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const io: CommandIo = {
  cwd: process.cwd(),
  env: process.env,
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
};

try {
  await createProgram(io).parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
  } else {
    const { text, code } = report(e);
    io.err(text);
    process.exitCode = code;
  }
}
