import { describe, expect, it } from 'vitest';
import { attrs, el, escapeXml, num, svgDocument, text } from '../../../src/sim/charts/svg.js';
import { svgProblem } from './svg-check.js';

describe('svg helpers', () => {
  it('escapes markup characters and drops characters XML forbids', () => {
    expect(escapeXml(`a<b & "c" 'd'>\u0001`)).toBe('a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;');
  });

  it('formats numbers with fixed precision and no negative zero', () => {
    expect([num(12.3456), num(1), num(-0.001), num(0.1 + 0.2), num(NaN)]).toEqual(['12.35', '1', '0', '0.3', '0']);
  });

  it('builds elements, skipping undefined attributes', () => {
    expect(attrs({ x: 1.5, id: undefined, fill: 'a"b' })).toBe(' x="1.5" fill="a&quot;b"');
    expect(el('g', {}, el('line', { x1: 0 }))).toBe('<g><line x1="0"/></g>');
    expect(text({ y: 2 }, '<&>')).toBe('<text y="2">&lt;&amp;&gt;</text>');
  });

  it('wraps a body in a well-formed document', () => {
    const doc = svgDocument(100, 50, 'T & <U>', [el('circle', { r: 1 })]);
    expect(doc).toContain('viewBox="0 0 100 50"');
    expect(svgProblem(doc)).toBeUndefined();
  });

  it('the checker catches broken markup', () => {
    expect(svgProblem('<svg><g></svg>')).toBeDefined();
    expect(svgProblem('<svg>a & b</svg>')).toBeDefined();
    expect(svgProblem('<svg>a < b</svg>')).toBeDefined();
    expect(svgProblem('<g></g>')).toBeDefined();
  });
});
