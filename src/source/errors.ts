/** Turns GDAL's error text into TesseraErrors a client can act on. */
import { TesseraError } from '../errors.js';
import { redactGateway } from './gateway.js';

export function gdalOpenError(err: unknown, what: string): TesseraError {
  const text = redactGateway(err instanceof Error ? err.message : String(err));
  const http = /HTTP response code:\s*(\d{3})/i.exec(text);
  if (http) {
    const code = Number(http[1]);
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
  return new TesseraError('UpstreamError', `${what} could not be read: ${text}`, { cause: err });
}

/** Errors while reading pixels from an opened dataset: truncated files, broken blocks, timeouts. */
export function gdalReadError(err: unknown, what: string): TesseraError {
  if (err instanceof TesseraError) return err;
  const e = gdalOpenError(err, what);
  return e.kind === 'BadRequest' ? new TesseraError('UpstreamError', `${what} could not be read: ${e.message}`, { cause: err }) : e;
}
