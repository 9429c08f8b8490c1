/**
 * A local certificate authority, as mkcert makes one: an ECDSA P-256 CA made at first use in a
 * folder (`ca.crt`, and `ca.key` readable by its owner only), reused afterwards, issuing server
 * certificates (`serverAuth`, the names as DNS subject alternative names, 397 days) for local
 * development. A client trusts what it issues once the CA certificate is in its trust store.
 *
 * Certificates are made with @peculiar/x509 on Node's WebCrypto (no hand-written ASN.1, no
 * openssl); the library is loaded on first use, so a server with its own certificates never loads it.
 */
import { randomBytes, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type * as X509Library from '@peculiar/x509';

/** One certificate and its key, PEM files. */
export interface PemPair {
  readonly certFile: string;
  readonly keyFile: string;
}

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { ...KEY_ALGORITHM, hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
/** The CA's lifetime, and a server certificate's (under the 398 days browsers accept from public CAs). */
const CA_DAYS = 3_650;
const LEAF_DAYS = 397;
/** A server certificate is issued again when it has less left than this. */
const RENEW_DAYS = 30;

type X509 = typeof X509Library;

/** The library, with the `reflect-metadata` polyfill its dependency injection needs loaded first. */
const library = async (): Promise<X509> => {
  await import('reflect-metadata');
  return import('@peculiar/x509');
};

/** Writes `text` to `file` through a temporary file (mode `mode`), so a reader never sees half of it. */
async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await chmod(tmp, mode);
  await rename(tmp, file);
}

const readText = (file: string): Promise<string | undefined> => readFile(file, 'utf8').catch(() => undefined);

/** A positive 128-bit serial number, in hex. */
const serial = (): string => {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString('hex');
};

/**
 * @example
 * const ca = await LocalCa.open('.tavern/tls');            // made on the first start, reused after
 * await ca.ensure(['*.lobby.local.localhost'], { certFile: '.tavern/tls/proxy.crt', keyFile: '.tavern/tls/proxy.key' });
 * ca.certFile // '.tavern/tls/ca.crt': what a client trusts
 */
export class LocalCa {
  /** The CA certificate clients trust. */
  readonly certFile: string;
  /** Whether this open made the CA (it must be trusted again). */
  readonly created: boolean;
  readonly #x509: X509;
  readonly #cert: InstanceType<X509['X509Certificate']>;
  readonly #key: webcrypto.CryptoKey;
  readonly #now: () => Date;

  private constructor(x509: X509, certFile: string, cert: InstanceType<X509['X509Certificate']>, key: webcrypto.CryptoKey, created: boolean, now: () => Date) {
    this.#x509 = x509;
    this.certFile = certFile;
    this.#cert = cert;
    this.#key = key;
    this.created = created;
    this.#now = now;
  }

  /** Opens the CA kept in `dir` (`ca.crt`, `ca.key`), making it when either file is missing. */
  static async open(dir: string, now: () => Date = () => new Date()): Promise<LocalCa> {
    const x509 = await library();
    const certFile = join(dir, 'ca.crt');
    const keyFile = join(dir, 'ca.key');
    const [certPem, keyPem] = await Promise.all([readText(certFile), readText(keyFile)]);
    if (certPem !== undefined && keyPem !== undefined) {
      const key = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(keyPem), KEY_ALGORITHM, false, ['sign']);
      return new LocalCa(x509, certFile, new x509.X509Certificate(certPem), key, false, now);
    }
    const keys = await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
    const start = now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: `CN=Tavern local CA ${serial().slice(0, 8)}, O=Tavern local development`,
      notBefore: new Date(start.getTime() - DAY_MS),
      notAfter: new Date(start.getTime() + CA_DAYS * DAY_MS),
      keys,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    }, webcrypto);
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
    await writeAtomic(keyFile, x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), 0o600);
    await writeAtomic(certFile, cert.toString('pem'), 0o644);
    return new LocalCa(x509, certFile, cert, keys.privateKey, true, now);
  }

  /**
   * Makes sure `pair` holds a certificate of this CA for exactly `names`, valid for at least 30
   * more days: kept when it does, issued (with a new key, mode 0600) when not. Resolves true when
   * it issued one.
   */
  async ensure(names: readonly string[], pair: PemPair): Promise<boolean> {
    if (await this.#fits(names, pair)) return false;
    const x509 = this.#x509;
    const keys = await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
    const start = this.#now();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${names[0] ?? 'localhost'}, O=Tavern local development`,
      issuer: this.#cert.subject,
      notBefore: new Date(start.getTime() - DAY_MS),
      notAfter: new Date(start.getTime() + LEAF_DAYS * DAY_MS),
      publicKey: keys.publicKey,
      signingKey: this.#key,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
        await x509.AuthorityKeyIdentifierExtension.create(this.#cert, false, webcrypto),
      ],
    }, webcrypto);
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
    await writeAtomic(pair.keyFile, x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), 0o600);
    await writeAtomic(pair.certFile, cert.toString('pem'), 0o644);
    return true;
  }

  /** Whether `pair` already holds this CA's certificate for exactly `names`, with 30 days or more left. */
  async #fits(names: readonly string[], pair: PemPair): Promise<boolean> {
    const [pem, key] = await Promise.all([readText(pair.certFile), readText(pair.keyFile)]);
    if (pem === undefined || key === undefined) return false;
    try {
      const cert = new NodeCertificate(pem);
      const ca = new NodeCertificate(this.#cert.toString('pem'));
      const sans = (cert.subjectAltName ?? '').split(', ').map((s) => s.replace(/^DNS:/, '')).sort();
      const renewBy = this.#now().getTime() + RENEW_DAYS * DAY_MS;
      return cert.checkIssued(ca) && cert.verify(ca.publicKey) && new Date(cert.validTo).getTime() > renewBy && JSON.stringify(sans) === JSON.stringify([...names].sort());
    } catch {
      return false;
    }
  }
}
