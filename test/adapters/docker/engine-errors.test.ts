import { describe, expect, it } from 'vitest';
import { describeEngineError, isStatus } from '../../../src/adapters/docker/engine-errors.js';

const engine = (statusCode: number, message: string) => Object.assign(new Error(`(HTTP code ${statusCode}) ${message}`), { statusCode, json: { message } });

describe('describeEngineError', () => {
  it('says what went wrong in a developer\'s words', () => {
    expect(describeEngineError({ code: 'ENOENT', address: '/var/run/docker.sock' })).toBe('the Docker engine is unreachable (ENOENT /var/run/docker.sock)');
    expect(describeEngineError({ code: 'ECONNREFUSED' })).toBe('the Docker engine is unreachable (ECONNREFUSED)');
    expect(describeEngineError(engine(500, 'driver failed programming external connectivity on endpoint tavern-x: Bind for 127.0.0.1:27001 failed: port is already allocated')))
      .toMatch(/^host port 27001 is already in use by another program/);
    expect(describeEngineError(engine(500, 'listen udp4 127.0.0.1:27555: bind: address already in use'))).toMatch(/^host port 27555 is already in use/);
    expect(describeEngineError(engine(500, 'write /var/lib/docker/tmp/x: no space left on device'))).toMatch(/^the Docker engine's disk is full/);
    expect(describeEngineError(engine(404, 'No such image: tavern-build:abc'))).toMatch(/^the build's image is missing/);
    expect(describeEngineError(engine(409, 'Conflict. The container name is already in use'))).toBe('the Docker engine refused: Conflict. The container name is already in use (HTTP 409)');
    expect(describeEngineError(new Error('plain'))).toBe('plain');
  });

  it('tells statuses apart', () => {
    expect(isStatus(engine(404, 'x'), 404)).toBe(true);
    expect(isStatus(engine(409, 'x'), 404)).toBe(false);
    expect(isStatus(undefined, 404)).toBe(false);
  });
});
