/**
 * Minimal SVG string building: XML escaping, fixed-precision numbers and element helpers.
 * Pure functions only; the output for a given input is always the same string.
 */

/** Attribute values of an element; `undefined` values are omitted, numbers go through {@link num}. */
export type Attrs = Readonly<Record<string, string | number | undefined>>;

/** Characters that XML 1.0 forbids in documents (C0 controls except tab, newline, carriage return). */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/**
 * Escapes text for use in XML content and double- or single-quoted attributes.
 *
 * @example
 * escapeXml('p95 < 5s & "ok"') // 'p95 &lt; 5s &amp; &quot;ok&quot;'
 */
export function escapeXml(s: string): string {
  return s
    .replace(FORBIDDEN, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Formats a coordinate with at most two decimals, no trailing zeros and no negative zero.
 *
 * @example
 * num(12.3456) // '12.35'
 * num(-0.001)  // '0'
 */
export function num(n: number): string {
  if (!Number.isFinite(n)) return '0';
  const s = n.toFixed(2).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

/**
 * Renders attributes in their given order, each preceded by a space.
 *
 * @example
 * attrs({ x: 1.5, fill: 'none', id: undefined }) // ' x="1.5" fill="none"'
 */
export function attrs(a: Attrs): string {
  let out = '';
  for (const [key, value] of Object.entries(a)) {
    if (value === undefined) continue;
    out += ` ${key}="${typeof value === 'number' ? num(value) : escapeXml(value)}"`;
  }
  return out;
}

/**
 * An element with already-rendered children; self-closing when there are none.
 *
 * @example
 * el('g', { class: 'axis' }, el('line', { x1: 0, x2: 10 })) // '<g class="axis"><line x1="0" x2="10"/></g>'
 */
export function el(tag: string, a: Attrs, ...children: readonly string[]): string {
  return children.length === 0 ? `<${tag}${attrs(a)}/>` : `<${tag}${attrs(a)}>${children.join('')}</${tag}>`;
}

/**
 * A `<text>` element whose content is escaped.
 *
 * @example
 * text({ x: 0, y: 10 }, 'a < b') // '<text x="0" y="10">a &lt; b</text>'
 */
export function text(a: Attrs, content: string): string {
  return `<text${attrs(a)}>${escapeXml(content)}</text>`;
}

/**
 * A complete standalone SVG document with a viewBox, an accessible `<title>` and a white background.
 *
 * @example
 * svgDocument(100, 50, 'Empty', []) // '<svg xmlns="http://www.w3.org/2000/svg" ...>...</svg>'
 */
export function svgDocument(width: number, height: number, title: string, body: readonly string[]): string {
  const root = {
    xmlns: 'http://www.w3.org/2000/svg',
    width,
    height,
    viewBox: `0 0 ${num(width)} ${num(height)}`,
    role: 'img',
    'font-family': 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif',
  };
  const background = el('rect', { x: 0, y: 0, width, height, fill: '#ffffff' });
  return `${el('svg', root, el('title', {}, escapeXml(title)), background, ...body)}\n`;
}
