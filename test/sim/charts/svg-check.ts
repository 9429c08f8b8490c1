/** Test helper: a tiny well-formedness check for the SVG strings the charts produce. */

const TAG = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
const ENTITY = /^&(?:amp|lt|gt|quot|#39);/;

/** Returns a description of the first problem, or `undefined` when tags balance and text is escaped. */
export function svgProblem(svg: string): string | undefined {
  if (!svg.startsWith('<svg')) return 'does not start with <svg';
  const stack: string[] = [];
  let i = 0;
  while (i < svg.length) {
    const c = svg[i];
    if (c === '<') {
      TAG.lastIndex = i;
      const m = TAG.exec(svg);
      if (m === null) return `malformed tag at ${i}: ${svg.slice(i, i + 40)}`;
      const [whole, closing, name = '', , selfClosing] = m;
      if (closing === '/') {
        if (stack.pop() !== name) return `unexpected </${name}> at ${i}`;
      } else if (selfClosing !== '/') {
        stack.push(name);
      }
      if (stack.length === 0 && i + whole.length < svg.trimEnd().length) return 'content after the root element';
      i += whole.length;
    } else if (c === '&') {
      if (!ENTITY.test(svg.slice(i, i + 6))) return `unescaped & at ${i}`;
      i++;
    } else if (c === '>') {
      return `stray > at ${i}`;
    } else {
      i++;
    }
  }
  return stack.length === 0 ? undefined : `unclosed <${stack.join('>, <')}>`;
}

/** Number of occurrences of `needle`. */
export function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}
