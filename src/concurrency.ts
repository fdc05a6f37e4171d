/**
 * Concurrency helpers every layer uses: bounded concurrency (mosaic assets, statistics features)
 * and loads shared by whoever asks for the same thing while it runs (metadata, documents).
 */

/** `fn` over every item with at most `limit` calls in flight; results in input order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

/** Where shared loads are kept: a Map (while in flight) or an LRU cache (kept once done). */
export interface PromiseTable<T> {
  get(key: string): Promise<T> | undefined;
  set(key: string, value: Promise<T>): unknown;
  delete(key: string): unknown;
}

/**
 * The load of `key` in progress (or kept, with `keep`), else a new one from `start`; failures are
 * never kept. A caller whose load failed with an error `startAgain` accepts (the request that
 * started it went away, upstream/budget.ts) starts it again itself.
 */
export function sharedLoad<T>(
  table: PromiseTable<T>,
  key: string,
  start: () => Promise<T>,
  opts: { keep?: boolean; startAgain?: (err: unknown) => boolean } = {},
): Promise<T> {
  let pending = table.get(key);
  if (!pending) {
    const started = start();
    pending = started;
    table.set(key, started);
    const forget = (): void => {
      if (table.get(key) === started) table.delete(key);
    };
    started.then(opts.keep ? undefined : forget, forget);
  }
  const startAgain = opts.startAgain;
  if (!startAgain) return pending;
  return pending.catch((err: unknown) => {
    if (startAgain(err)) return sharedLoad(table, key, start, opts);
    throw err;
  });
}
