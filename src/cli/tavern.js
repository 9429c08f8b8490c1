#!/usr/bin/env -S node --max-semi-space-size=64
// The `tavern` command: the TypeScript sources run through tsx (installed by `npm ci`).
import { URL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
await import(new URL('./main.ts', import.meta.url).href);
