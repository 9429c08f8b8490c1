/**
 * An optional field for an object spread: `{ [key]: value }` when the value is defined, `{}` when it
 * is not, so an absent value leaves no key (with `exactOptionalPropertyTypes` a key holding
 * `undefined` is not an absent one; stored and sent JSON drop both alike).
 *
 * @example
 * ({ a: 1, ...optional('b', undefined) }) // { a: 1 }
 * ({ a: 1, ...optional('b', 2) }) // { a: 1, b: 2 }
 */
export const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
