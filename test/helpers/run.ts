/** A command run to its end with its input given, its status and output collected (the CLI tests). */
import { spawn } from 'node:child_process';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    // A command that exits before reading its input closes the pipe: EPIPE is not the test's failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}
