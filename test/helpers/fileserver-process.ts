/**
 * The test file server (fileserver.ts) in a child process. Beside an in-process tessera it must not
 * share this process's libuv thread pool: GDAL's reads block pool threads while they wait for that
 * very server, and with a few parallel tiles they starve it (real deployments read other hosts).
 */
import { spawn } from 'node:child_process';

export interface ServedFolder {
  url: string;
  stop(): Promise<void>;
}

export async function serveFolderInChild(root: string): Promise<ServedFolder> {
  const helper = new URL('./fileserver.js', import.meta.url).href;
  const script = `const { startFileServer } = await import(${JSON.stringify(helper)});
const server = await startFileServer(${JSON.stringify(root)});
process.stdout.write(server.url + '\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').trim()));
    child.once('exit', (code) => reject(new Error(`file server exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
