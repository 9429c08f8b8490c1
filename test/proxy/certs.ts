/** Test certificates made with openssl: CAs, and wildcard leaves for `*.lobby.local.example.test` signed by one of them. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const openssl = (...args: string[]): void => {
  execFileSync('openssl', args, { stdio: 'ignore' });
};

/** A CA (`<name>.crt`/`<name>.key`) in `dir`. */
export const makeCa = (dir: string, name: string): void =>
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`));

/** A leaf for `*.lobby.local.example.test` signed by the CA `ca`, written to `next.crt`/`next.key`. */
const makeLeaf = (dir: string, ca: string, serial: string): void => {
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:*.lobby.local.example.test,DNS:lobby.local.example.test\n');
  openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=*.lobby.local.example.test',
    '-keyout', join(dir, 'next.key'), '-out', join(dir, 'next.csr'));
  openssl('x509', '-req', '-in', join(dir, 'next.csr'), '-CA', join(dir, `${ca}.crt`), '-CAkey', join(dir, `${ca}.key`), '-set_serial', serial, '-days', '1',
    '-extfile', join(dir, 'leaf.ext'), '-out', join(dir, 'next.crt'));
};

/** A new leaf written over `lobby.crt`/`lobby.key` in place, as a certificate renewal would: the key first, then the chain. */
export const writeLeaf = (dir: string, ca: string, serial: string): void => {
  makeLeaf(dir, ca, serial);
  execFileSync('cp', [join(dir, 'next.key'), join(dir, 'lobby.key')]);
  execFileSync('cp', [join(dir, 'next.crt'), join(dir, 'lobby.crt')]);
};
