/**
 * The warm-up's own requests: before the server listens, Services.warm asks the tile routes in
 * process (warm-up.ts), marked by WARM_UP_HEADER with the process's secret token. They are nobody's
 * requests: not counted in /metrics, logged at debug level only, and neither answered from the
 * tile cache nor stored in it. A client's header without the token is only a header.
 */
import type { FastifyRequest } from 'fastify';
import { WARM_UP_HEADER } from '../warm-up.js';

export function isWarmUp(request: FastifyRequest, token: string): boolean {
  return request.headers[WARM_UP_HEADER] === token;
}
