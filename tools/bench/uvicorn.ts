/** How the benchmarks start a TiTiler application: uvicorn on loopback, one worker per core, no access log. */
import os from 'node:os';

export function uvicornArgs(app: string, port: number): string[] {
  return [app, '--host', '127.0.0.1', '--port', String(port), '--workers', String(os.availableParallelism()), '--no-access-log', '--log-level', 'warning'];
}
