/**
 * Canonical JSON: object keys sorted, `undefined` members left out, no whitespace. Two values that
 * are equal as data serialize to the same string on any machine, which is what a trace hash needs.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`cannot trace the number ${value}`);
    if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') {
      throw new TypeError(`cannot trace a ${typeof value}`);
    }
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v: unknown) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .flatMap((k) => {
      const v = (value as Record<string, unknown>)[k];
      return v === undefined ? [] : [`${JSON.stringify(k)}:${canonicalJson(v)}`];
    });
  return `{${entries.join(',')}}`;
};
