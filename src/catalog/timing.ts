/**
 * What a request's catalogue lookups cost and what it should be told of them, for a catalogue held
 * in memory (stac-geoparquet, a STAC API's searches): the seconds its lookups took (the answer's
 * `Server-Timing: catalog` entry, and each lookup for the /metrics histogram), and whether an index
 * it read holds only part of what its search matched (the answer's `X-Tessera-Catalog-Truncated`).
 * The request's record is entered before its first await (as the upstream budget is): the lookups
 * of its asynchronous flow find it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Lookup durations, in seconds, for the histogram of /metrics. */
export const LOOKUP_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1];

/** What the lookups of one request cost, and what they found to say. */
export interface RequestTiming {
  seconds: number;
  lookups: number;
  /** Set when a search it read was loaded in part: `<items held> of <items matched, or "more">`. */
  truncated?: string;
}

export class LookupTiming {
  private readonly requests = new AsyncLocalStorage<RequestTiming>();
  /** Called with each lookup's seconds (the /metrics histogram). */
  onLookup: ((seconds: number) => void) | undefined;

  /** Starts the current request's record (the API layer reads it for the answer's headers). */
  enterRequest(): RequestTiming {
    const t: RequestTiming = { seconds: 0, lookups: 0 };
    this.requests.enterWith(t);
    return t;
  }

  observe(seconds: number): void {
    this.onLookup?.(seconds);
    const t = this.requests.getStore();
    if (t) {
      t.seconds += seconds;
      t.lookups++;
    }
  }

  /** Notes in the current request's record that a search it reads is truncated. */
  truncated(what: string): void {
    const t = this.requests.getStore();
    if (t) t.truncated = what;
  }
}

/** A catalogue held in memory: its lookups are timed per request. */
export interface TimedCatalogue {
  readonly timing: LookupTiming;
}
