import type { Effect, StartLobby } from '../core/effects.js';
import type { LobbyLogs, ProxyRoutes, Runtime } from '../io/index.js';

/** What effects are carried out against. Without a runtime no lobby can start (the services refuse to create one). */
export interface EffectPorts {
  readonly runtime?: Runtime;
  readonly routes: ProxyRoutes;
  readonly logs: LobbyLogs;
  /** A container that could not be started: the services stop its lobby (`start-failed`). */
  readonly startFailed: (effect: StartLobby, error: unknown) => Promise<void>;
  /** Any other effect that failed: logged, never thrown into the request that caused it. */
  readonly failed: (effect: Effect, error: unknown) => void;
}

const performOne = async (effect: Effect, ports: EffectPorts): Promise<void> => {
  switch (effect.type) {
    case 'start-lobby':
      if (ports.runtime === undefined) throw new Error('no container runtime is configured');
      return ports.runtime.start(effect);
    case 'stop-lobby':
      return ports.runtime?.stop(effect);
    case 'bind-route':
      return ports.routes.bind(effect.route);
    case 'unbind-route':
      return ports.routes.unbind(effect.route);
    case 'append-log':
      return ports.logs.append(effect);
  }
};

/**
 * The one effect interpreter: carry out a committed decision's effects in order. A failure never
 * propagates: a start failure stops the lobby, anything else is reported to `failed`.
 *
 * @example
 * await performEffects(decision.effects, ports);
 */
export const performEffects = async (effects: readonly Effect[], ports: EffectPorts): Promise<void> => {
  for (const effect of effects) {
    try {
      await performOne(effect, ports);
    } catch (error) {
      if (effect.type === 'start-lobby') await ports.startFailed(effect, error);
      else ports.failed(effect, error);
    }
  }
};
