/** Starts a real tessera (Fastify listening on 127.0.0.1) for route tests. */
import type { FastifyInstance } from 'fastify';
import { loadSettings, type Settings } from '../../src/config.js';
import { Services } from '../../src/services.js';
import { buildApp } from '../../src/api/app.js';

export interface RunningTessera {
  url: string;
  app: FastifyInstance;
  services: Services;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** Loopback only: the tests' file servers listen there, and tessera refuses it by default. */
export const LOOPBACK: string[] = ['127.0.0.0/8', '::1/128'];

export async function startTessera(overrides: Partial<Settings> = {}): Promise<RunningTessera> {
  const services = new Services(loadSettings({ logLevel: 'silent', allowedNetworks: LOOPBACK, ...overrides }));
  const app = await buildApp(services, { logger: false });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    app,
    services,
    get: (path, headers = {}) => fetch(`${address}${path}`, { headers }),
    close: () => app.close(),
  };
}
