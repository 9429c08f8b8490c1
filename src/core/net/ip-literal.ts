/**
 * IP literal parsing as the WHATWG URL host parser does it, so that what is checked is what an HTTP
 * client later connects to. Whether an address is global is `special-addresses.ts`'s question.
 */

function ipv4Number(part: string): number | undefined {
  if (part === '') return undefined;
  // Stryker disable next-line Regex: a part with 0x after its start has an x past its first two characters, which the hex pattern refuses: unanchored reads the same
  const hex = /^0x/i.test(part);
  // Hex first; a leading 0 is an octal digit itself (and a lone 0 reads 0 in any base).
  const octal = part.startsWith('0');
  const digits = hex ? part.slice(2) : part;
  if (digits === '') return 0;
  const pattern = hex ? /^[0-9a-f]+$/i : octal ? /^[0-7]+$/ : /^[0-9]+$/;
  return pattern.test(digits) ? parseInt(digits, hex ? 16 : octal ? 8 : 10) : undefined;
}

function labels(host: string): string[] {
  const parts = host.split('.');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/**
 * WHATWG's "ends in a number": such a host is parsed as IPv4 (`127.1`, `0x7f.1`, `2130706433`).
 *
 * @example
 * endsInNumber('2130706433'); // true
 * endsInNumber('example.com'); // false
 */
export function endsInNumber(host: string): boolean {
  const last = labels(host).at(-1) ?? '';
  if (/^[0-9]+$/.test(last)) return true;
  // Stryker disable next-line Regex: only a 0x-prefixed part with an x in it is a number
  return ipv4Number(last) !== undefined && /^0x/i.test(last);
}

/**
 * The 32-bit value of a WHATWG IPv4 host (decimal, octal or hex parts, 1–4 parts), or `undefined`.
 *
 * @example
 * parseIpv4('127.1'); // 2130706433
 */
export function parseIpv4(host: string): number | undefined {
  const parts = labels(host);
  if (parts.length > 4) return undefined;
  const numbers = parts.map(ipv4Number);
  const last = numbers.pop();
  if (last === undefined || numbers.some((n) => n === undefined || n > 255)) return undefined;
  if (last >= 256 ** (5 - parts.length)) return undefined;
  return numbers.reduce<number>((sum, n, i) => sum + (n ?? 0) * 256 ** (3 - i), last);
}

function embeddedIpv4(piece: string): readonly number[] | undefined {
  const parts = piece.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255)) return undefined;
  const [a = 0, b = 0, c = 0, d = 0] = parts.map(Number);
  return [a * 256 + b, c * 256 + d];
}

function pieces(side: string): number[] | undefined {
  if (side === '') return [];
  const parts = side.split(':');
  const tail = parts.at(-1) ?? '';
  // A dotted tail that is no IPv4 address stays among the hex parts, and fails their pattern.
  const v4 = embeddedIpv4(tail);
  const hexParts = v4 ? parts.slice(0, -1) : parts;
  if (hexParts.some((p) => !/^[0-9a-f]{1,4}$/i.test(p))) return undefined;
  return [...hexParts.map((p) => parseInt(p, 16)), ...(v4 ?? [])];
}

/**
 * The eight 16-bit pieces of an IPv6 literal (without brackets), or `undefined`.
 *
 * @example
 * parseIpv6('::1'); // [0, 0, 0, 0, 0, 0, 0, 1]
 */
export function parseIpv6(text: string): readonly number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = pieces(halves[0] ?? '');
  const tail = pieces(halves[1] ?? '');
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/**
 * The 128-bit value of an IPv6 address's eight pieces.
 *
 * @example
 * ipv6Value([0, 0, 0, 0, 0, 0, 0, 1]); // 1n
 */
export const ipv6Value = (pieces: readonly number[]): bigint => pieces.reduce((value, piece) => (value << 16n) | BigInt(piece), 0n);
