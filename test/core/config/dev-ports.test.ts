import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateDevelopmentPorts } from '../../../src/core/config/dev-ports.js';

const paths = (input: unknown): string[] => validateDevelopmentPorts(input).map((p) => p.path.join('.'));

describe('validateDevelopmentPorts (wire.md §2.5)', () => {
  it('accepts single ports of any protocol and tcp/udp ranges', () => {
    expect(paths([
      { label: 'web', target_port: 8080, proxy_protocol: 'http' },
      { label: 'tls', target_port: 8443, proxy_protocol: 'tcp_tls' },
      { label: 'udp-range', port_range: { min: 7000, max: 7010 }, proxy_protocol: 'udp' },
      { label: 'tcp-range', port_range: { min: 8000, max: 8010 }, proxy_protocol: 'tcp' },
    ])).toEqual([]);
  });

  it('reports each rule at the port index', () => {
    expect(paths([
      { label: 'Bad', target_port: 1, proxy_protocol: 'udp' },
      { label: 'a', target_port: 2, proxy_protocol: 'udp' },
      { label: 'a', target_port: 2, proxy_protocol: 'udp' },
      { label: 'c', target_port: 2, proxy_protocol: 'tcp' },
      { label: 'd', port_range: { min: 10, max: 20 }, proxy_protocol: 'https' },
      { label: 'e', port_range: { min: 30, max: 20 }, proxy_protocol: 'udp' },
      { label: 'f', port_range: { min: 100, max: 200 }, proxy_protocol: 'udp' },
      { label: 'g', port_range: { min: 150, max: 160 }, proxy_protocol: 'tcp' },
      { label: 'h', target_port: 5, port_range: { min: 1000, max: 1001 }, proxy_protocol: 'tcp' },
      { label: 'i', proxy_protocol: 'tcp' },
    ])).toEqual([
      'ports.0.label-invalid',
      'ports.2.label-not-unique',
      'ports.2.port-protocol-not-unique',
      'ports.4.unsupported-port-range',
      'ports.5.range-min-gt-max',
      'ports.7.ranges-overlap',
      'ports.8.duplicate-port-and-port-range',
      'ports.9.missing-port-and-port-range',
    ]);
  });

  it('limits the number of ports', () => {
    const ports = Array.from({ length: 17 }, (_, i) => ({ label: `p${i}`, target_port: 1000 + i, proxy_protocol: 'udp' }));
    expect(paths(ports)).toEqual(['ports-too-many']);
  });

  it('accepts exactly 16 ports and a one-port range', () => {
    expect(paths(Array.from({ length: 16 }, (_, i) => ({ label: `p${i}`, target_port: 1000 + i, proxy_protocol: 'udp' })))).toEqual([]);
    expect(paths([{ label: 'one', port_range: { min: 7000, max: 7000 }, proxy_protocol: 'udp' }])).toEqual([]);
  });

  it('treats ranges as overlapping when they share a port, on either side, and not otherwise', () => {
    const r = (label: string, min: number, max: number): object => ({ label, port_range: { min, max }, proxy_protocol: 'udp' });
    expect(paths([r('a', 7000, 7010), r('below', 6000, 6999), r('above', 7011, 7020)])).toEqual([]);
    expect(paths([r('a', 7000, 7010), r('touch-low', 6990, 7000)])).toEqual(['ports.1.ranges-overlap']);
    expect(paths([r('a', 7000, 7010), r('touch-high', 7010, 7015)])).toEqual(['ports.1.ranges-overlap']);
  });

  it('reports malformed entries as problems', () => {
    expect(paths('nope')).toEqual(['ports.invalid-type']);
    expect(paths([null, { label: 3, target_port: -1, proxy_protocol: 'sctp' }, {}])).toEqual([
      'ports.0.invalid-type',
      'ports.1.label.invalid-type',
      'ports.1.target-port.negative',
      'ports.1.proxy-protocol.invalid',
      'ports.2.label.missing',
      'ports.2.proxy-protocol.missing',
    ]);
  });

  it('never throws and always returns non-empty string paths', () => {
    fc.assert(fc.property(fc.oneof(fc.anything(), fc.array(fc.anything()), fc.array(fc.record({ label: fc.string(), target_port: fc.anything(), port_range: fc.anything(), proxy_protocol: fc.string() }, { requiredKeys: [] }))), (input) => {
      for (const p of validateDevelopmentPorts(input)) {
        expect(p.path.length).toBeGreaterThan(0);
        for (const segment of p.path) expect(typeof segment).toBe('string');
      }
    }), { numRuns: 200 });
  });
});
