/**
 * Canonical JSON: object keys sorted, `undefined` members left out, no whitespace. Two values that
 * are equal as data serialize to the same string on any machine, which is what a trace hash needs.
 * Written as plain loops: a run serializes millions of records.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export const canonicalJson = (value: unknown): string => {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`cannot trace the number ${value}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i] as unknown);
        return `${out}]`;
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      let out = '{';
      let first = true;
      for (const key of keys) {
        const v = record[key];
        if (v === undefined) continue;
        out += (first ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(v);
        first = false;
      }
      return `${out}}`;
    }
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new TypeError(`cannot trace a ${typeof value}`);
  }
};
