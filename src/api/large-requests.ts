/**
 * Requests that read and hold whole images (previews, bbox and feature parts, statistics) take up to
 * tens of MiB each, where a tile takes one or two. Running more of them at once than there are cores
 * does not finish them sooner, it only multiplies the memory held: sixteen concurrent 1024-px
 * previews with statistics raised peak RSS by ~210 MiB. Routes marked `config: { large: true }`
 * wait here for one of `limit` slots; everything else is untouched.
 */
import type { FastifyInstance } from 'fastify';

/** A counting semaphore with a FIFO queue. */
export class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Resolves with a release function once a slot is free. */
  async enter(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` does not change.
      if (next) next();
      else this.active--;
    };
  }

  get queued(): number {
    return this.waiting.length;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads whole images: at most `largeRequests` of them run at once. */
    large?: boolean;
  }
}

/** Holds the handlers of `large` routes until a slot is free (after validation: bad requests are refused at once). */
export function installLargeRequestGate(app: FastifyInstance, limit: number): void {
  const gate = new Gate(Math.max(1, limit));
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.large !== true) return;
    const release = await gate.enter();
    // 'close' comes when the answer is sent or the client went away, whatever the handler did.
    reply.raw.once('close', release);
  });
}
