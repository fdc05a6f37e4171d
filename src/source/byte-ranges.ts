/**
 * Raw bytes of a raster the URL policy allowed, for the few questions GDAL's binding cannot answer
 * (the TIFF layout a COG validation checks: where each IFD and each level's first block lie).
 * HTTP sources are read with single Range requests through the upstream client, so every hop passes
 * the same URL and network policies as GDAL's reads do; local files (only where a setting allows
 * them) with positional reads. Every byte read is charged to the current request's upstream budget.
 */
import { open as openFile } from 'node:fs/promises';
import { TesseraError, badRequest } from '../errors.js';
import { UpstreamRefused, UpstreamTimeout, type UpstreamClient } from '../upstream/client.js';
import type { Location } from '../upstream/url-policy.js';

export interface ByteRanges {
  /** Up to `length` bytes from `offset`; fewer only at the end of the file. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

export interface ByteRangeOptions {
  client: UpstreamClient;
  timeoutMs: number;
  /** Charges bytes to the current request; false when its budget is spent. */
  charge?: (bytes: number) => boolean;
  overBudget?: () => string;
}

export function byteRangesOf(loc: Location, label: string, opts: ByteRangeOptions): ByteRanges {
  const charge = (bytes: number): void => {
    if (opts.charge && !opts.charge(bytes)) throw badRequest(opts.overBudget?.() ?? 'the request read more upstream bytes than allowed');
  };
  if (loc.kind === 'file') {
    return {
      async read(offset, length) {
        const file = await openFile(loc.path, 'r').catch((err: unknown) => {
          throw new TesseraError('UpstreamNotFound', `${label} not found`, { cause: err });
        });
        try {
          const buf = Buffer.alloc(length);
          const { bytesRead } = await file.read(buf, 0, length, offset);
          charge(bytesRead);
          return buf.subarray(0, bytesRead);
        } finally {
          await file.close();
        }
      },
    };
  }
  return {
    async read(offset, length) {
      const signal = AbortSignal.timeout(opts.timeoutMs);
      try {
        const res = await opts.client.get(loc.url, { range: `bytes=${offset}-${offset + length - 1}`, signal });
        const status = res.statusCode ?? 502;
        if (status === 416) {
          res.resume();
          return new Uint8Array(0);
        }
        if (status !== 206) {
          res.destroy();
          if (status === 404 || status === 410) throw new TesseraError('UpstreamNotFound', `${label} not found (upstream answered ${status})`);
          if (status === 401 || status === 403) throw new TesseraError('UpstreamForbidden', `${label}: access refused (upstream answered ${status})`);
          if (status === 200) throw new TesseraError('UpstreamError', `${label}: the server does not support HTTP range requests`);
          throw new TesseraError('UpstreamError', `${label}: upstream answered ${status}`);
        }
        const out = new Uint8Array(length);
        let size = 0;
        for await (const chunk of res as AsyncIterable<Buffer>) {
          charge(chunk.length);
          if (size + chunk.length > length) {
            res.destroy();
            throw new TesseraError('UpstreamError', `${label}: the server sent more bytes than the range asked for`);
          }
          out.set(chunk, size);
          size += chunk.length;
        }
        if (!res.complete) throw new TesseraError('UpstreamError', `${label} arrived incomplete`);
        return out.subarray(0, size);
      } catch (err) {
        if (err instanceof TesseraError) throw err;
        if (err instanceof UpstreamRefused) throw badRequest(`${label} is not allowed: ${err.message}`);
        if (err instanceof UpstreamTimeout || signal.aborted)
          throw new TesseraError('Timeout', `${label} did not answer within ${opts.timeoutMs} ms`, { cause: err });
        throw new TesseraError('UpstreamError', `${label} could not be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },
  };
}
