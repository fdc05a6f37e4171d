/** Turns GDAL's error text into TesseraErrors a client can act on. */
import { TesseraError } from '../errors.js';
import { GATEWAY_REFUSED_STATUS, redactGateway } from '../upstream/gateway.js';
import { ALLOWED_NETWORKS_SETTING } from '../upstream/network-policy.js';

/** GDAL's words for data it cannot decode or find in a file (libtiff, the block readers, codecs). */
const DAMAGE = /TIFF|IReadBlock|Read error|read failed|IRasterIO|decod|decompress|LZW|Deflate|ZSTD|LERC|JPEG|WebP|corrupt|offset|past the end|end of file/i;

/**
 * `damaged`: the bytes GDAL read arrived whole (a local file, or no upstream fault during the call),
 * so an error GDAL gives no HTTP or network reason for is the file's own: a 400, not a 502.
 */
export function gdalOpenError(err: unknown, what: string, opts: { damaged?: boolean } = {}): TesseraError {
  const text = redactGateway(err instanceof Error ? err.message : String(err));
  const http = /HTTP response code:\s*(\d{3})/i.exec(text);
  if (http) {
    const code = Number(http[1]);
    if (code === GATEWAY_REFUSED_STATUS) return refusedUpstream(what, err);
    if (code === 404 || code === 410) return new TesseraError('UpstreamNotFound', `${what} not found (upstream answered ${code})`, { cause: err });
    if (code === 401 || code === 403) return new TesseraError('UpstreamForbidden', `${what}: access refused (upstream answered ${code})`, { cause: err });
    return new TesseraError('UpstreamError', `${what}: upstream answered ${code}`, { cause: err });
  }
  if (/timed? ?out|Timeout was reached/i.test(text)) {
    return new TesseraError('Timeout', `${what}: upstream did not answer in time (${text})`, { cause: err });
  }
  if (/No such file or directory|does not exist in the file system/i.test(text)) {
    return new TesseraError('UpstreamNotFound', `${what} not found`, { cause: err });
  }
  if (/not recognized as a supported file format|not a (valid )?TIFF|not supported/i.test(text)) {
    return new TesseraError('BadRequest', `${what} is not a raster GDAL can read`, { cause: err });
  }
  if (/connect|resolve host|Connection refused|Could not resolve/i.test(text)) {
    return new TesseraError('UpstreamError', `${what}: could not connect to the upstream server`, { cause: err });
  }
  if (/coordinate operation|reproject|PROJ\b|transformation/i.test(text)) {
    return new TesseraError('BadRequest', `${what} cannot be reprojected as asked: ${text.trim()}`, { cause: err });
  }
  if (opts.damaged && DAMAGE.test(text)) return new TesseraError('BadRequest', `${what} is damaged: GDAL could not read it (${text.trim()})`, { cause: err });
  return new TesseraError('UpstreamError', `${what} could not be read: ${text}`, { cause: err });
}

/** The gateway refused the upstream a raster (or one of its redirects) leads to. */
function refusedUpstream(what: string, cause?: unknown): TesseraError {
  return new TesseraError(
    'BadRequest',
    `${what} is not allowed: it leads to an address or host tessera does not reach (loopback, private, link-local and other ` +
      `non-public networks need ${ALLOWED_NETWORKS_SETTING}; hosts TESSERA_ALLOWED_HOSTS / TESSERA_DENIED_HOSTS)`,
    { cause },
  );
}
