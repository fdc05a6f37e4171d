/**
 * The one error type of tessera's core. Code below `api` throws it with a kind that says what went
 * wrong; `api/errors.ts` alone maps kinds to HTTP status codes.
 */
export type ErrorKind =
  /** The client's input is wrong (bad value, refused URL, limits exceeded). */
  | 'BadRequest'
  /** A named thing (asset, band) does not exist in the source. */
  | 'NotFound'
  /** The requested tile does not touch the data. */
  | 'TileOutsideBounds'
  /** The requested point is not inside the data (rio-tiler's PointOutsideBounds). */
  | 'PointOutsideBounds'
  /** Nothing to draw (mosaic without assets for the tile). */
  | 'NoContent'
  /** The upstream document or raster does not exist (HTTP 404 upstream, missing file). */
  | 'UpstreamNotFound'
  /** The upstream refused access (HTTP 401/403 upstream). */
  | 'UpstreamForbidden'
  /** The upstream answered wrongly: 5xx, truncated or unreadable data, a connection failure. */
  | 'UpstreamError'
  /** The upstream did not answer in time, or the request's own deadline passed. */
  | 'Timeout'
  /** The server cannot start the request in time (its turn would come too late): retry later. */
  | 'Busy'
  /** The client went away: nothing more is started for it (no one reads the answer). */
  | 'ClientGone'
  /** A bug or resource failure on our side. */
  | 'Internal';

export class TesseraError extends Error {
  /** When to try again, in seconds (a Busy answer's Retry-After). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options);
    this.name = 'TesseraError';
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export const badRequest = (message: string): TesseraError => new TesseraError('BadRequest', message);

/** A band index the raster does not have (`what`: "the raster", "asset 'B01'" …), one message wherever it is found. */
export const invalidBandIndex = (index: number, count: number, what = 'the raster'): TesseraError =>
  badRequest(`Invalid band index ${index} for ${what}: it has ${count} band(s)`);

/** Python's repr of a list of strings, used in messages TiTiler clients already parse. */
export function pyList(items: readonly string[]): string {
  return `[${items.map((s) => `'${s}'`).join(', ')}]`;
}

/** More assets than one read may open (TESSERA_MAX_ASSETS), refused before any is opened. */
export function checkAssetCount(count: number, max: number, what: string): void {
  if (count > max) {
    throw badRequest(`${what} has ${count} assets to read, more than one request may open (${max}, TESSERA_MAX_ASSETS): name fewer assets`);
  }
}
