#!/usr/bin/env node
// The `tavern` command. Runs the compiled build (`npm run build`) when there is one, else the
// TypeScript sources through tsx (installed with the dev dependencies).
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const built = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
