/**
 * The manager's nodes as a start reads them (for the drain and the regions): the last read is
 * used again until the manager says a node changed, through its event stream (`GET /events`,
 * type node: a label set or removed, a node joining, leaving, going down or coming back), so a
 * start costs no node read while nothing changed and a drain set a moment ago is seen as soon as
 * its event arrives. While the stream is not open (not followed yet, or it ended: a client
 * timeout, the manager restarting) every start reads the nodes, as it would without it, and the
 * first one opens it again.
 */
import type Dockerode from 'dockerode';
import { nodeFacts, type RawNode, type SwarmNodeFacts } from './swarm-state.js';

type EventStream = NodeJS.ReadableStream & { destroy?: () => void; socket?: { unref?: () => void } };

/**
 * @example
 * const nodes = new NodeList(manager);
 * await nodes.follow();
 * (await nodes.current()).filter((n) => n.drained); // no request while no node changed
 */
export class NodeList {
  readonly #docker: Dockerode;
  readonly #warn: (message: string, error: unknown) => void;
  /** Whether the stream should be open: from `follow` until `close`. */
  #wanted = false;
  /** Whether the last attempt to open the stream failed (said once, not at every start). */
  #failing = false;
  /** Moves on with every node event (and when the stream opens or ends): a read begun before it may be stale. */
  #generation = 0;
  #kept: { readonly generation: number; readonly nodes: readonly SwarmNodeFacts[] } | undefined;
  #reading: { readonly generation: number; readonly nodes: Promise<readonly SwarmNodeFacts[]> } | undefined;
  #events: EventStream | undefined;
  #opening: Promise<void> | undefined;

  constructor(docker: Dockerode, warn: (message: string, error: unknown) => void) {
    this.#docker = docker;
    this.#warn = warn;
  }

  /** The nodes now: the last read while the stream is open and no node changed since it began, else a read (and the stream opened again when it ended). */
  current(): Promise<readonly SwarmNodeFacts[]> {
    if (this.#wanted && this.#events === undefined) void this.#open();
    const kept = this.#kept;
    return this.#events !== undefined && kept?.generation === this.#generation ? Promise.resolve(kept.nodes) : this.read();
  }

  /** Asks the manager (callers at once share one request, unless a node changed after it began). */
  read(): Promise<readonly SwarmNodeFacts[]> {
    const generation = this.#generation;
    if (this.#reading?.generation === generation) return this.#reading.nodes;
    const nodes: Promise<readonly SwarmNodeFacts[]> = this.#docker.listNodes().then(
      (raw) => {
        const read = nodeFacts(raw as RawNode[]);
        if (generation === this.#generation) this.#kept = { generation, nodes: read };
        return read;
      },
    ).finally(() => {
      if (this.#reading?.nodes === nodes) this.#reading = undefined;
    });
    this.#reading = { generation, nodes };
    return nodes;
  }

  /** Opens the manager's node event stream unless it is open, and keeps it open until `close`; when the manager refuses it, says so (a later start or call tries again). */
  follow(): Promise<void> {
    this.#wanted = true;
    return this.#open();
  }

  #open(): Promise<void> {
    if (this.#events !== undefined) return Promise.resolve();
    this.#opening ??= (async () => {
      try {
        const events = (await this.#docker.getEvents({ filters: { type: ['node'] } })) as EventStream;
        if (!this.#wanted) {
          events.destroy?.();
          return;
        }
        const changed = (): void => {
          this.#generation += 1;
        };
        const ended = (): void => {
          if (this.#events !== events) return;
          this.#events = undefined;
          changed();
        };
        events.on('data', changed);
        events.once('end', ended);
        events.once('close', ended);
        events.once('error', ended);
        // Open for as long as the runtime lives, never what keeps the process alive.
        events.socket?.unref?.();
        this.#events = events;
        this.#failing = false;
        changed();
      } catch (error) {
        if (!this.#failing) this.#warn("following the Swarm manager's node events failed: every start reads the nodes until it works", error);
        this.#failing = true;
      } finally {
        this.#opening = undefined;
      }
    })();
    return this.#opening;
  }

  /** Closes the event stream (reads go to the manager again) until `follow` is called again. */
  close(): void {
    this.#wanted = false;
    const events = this.#events;
    this.#events = undefined;
    this.#generation += 1;
    events?.destroy?.();
  }
}
