/**
 * The CDN's certificates: a directory with one PEM pair per domain, `<domain>.crt` and
 * `<domain>.key`, or a wildcard pair `_.<parent>.crt`/`_.<parent>.key` covering `*.<parent>` (one
 * label). Read when a TLS handshake names the domain and re-read when the files change, so a
 * certificate added or renewed is used without a restart.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';

interface Loaded {
  readonly stamp: string;
  readonly context: SecureContext;
}

const NAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

/**
 * @example
 * const certs = new CertDir('/etc/tavern/certs');
 * https.createServer({ SNICallback: certs.sniCallback }, handler);
 * certs.covers('play.example.com') // false: served over HTTP only
 */
export class CertDir {
  readonly #dir: string;
  readonly #loaded = new Map<string, Loaded>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Whether a certificate pair (own or wildcard) covers `domain` now. */
  covers(domain: string): boolean {
    return this.#pairFor(domain.toLowerCase()) !== undefined;
  }

  /** The context for `domain`, or undefined when no pair covers it (the handshake fails). */
  context(domain: string): SecureContext | undefined {
    const pair = this.#pairFor(domain.toLowerCase());
    if (pair === undefined) return undefined;
    const known = this.#loaded.get(pair.base);
    if (known?.stamp === pair.stamp) return known.context;
    const context = createSecureContext({ cert: readFileSync(`${pair.base}.crt`), key: readFileSync(`${pair.base}.key`) });
    this.#loaded.set(pair.base, { stamp: pair.stamp, context });
    return context;
  }

  /** For `tls.createServer`'s `SNICallback`. */
  readonly sniCallback = (servername: string, callback: (error: Error | null, context?: SecureContext) => void): void => {
    try {
      const context = this.context(servername);
      if (context === undefined) callback(new Error(`no certificate for ${servername}`));
      else callback(null, context);
    } catch (error) {
      callback(error instanceof Error ? error : new Error(String(error)));
    }
  };

  /** The file base and change stamp (sizes and mtimes) of the pair for `domain`: its own, else its wildcard. */
  #pairFor(domain: string): { base: string; stamp: string } | undefined {
    if (!NAME.test(domain) || domain.includes('..')) return undefined;
    const dot = domain.indexOf('.');
    const candidates = [domain, ...(dot > 0 ? [`_${domain.slice(dot)}`] : [])];
    for (const name of candidates) {
      const base = join(this.#dir, name);
      const crt = statSync(`${base}.crt`, { throwIfNoEntry: false });
      const key = statSync(`${base}.key`, { throwIfNoEntry: false });
      if (crt?.isFile() === true && key?.isFile() === true) return { base, stamp: `${crt.mtimeMs}:${crt.size}:${key.mtimeMs}:${key.size}` };
    }
    return undefined;
  }
}
