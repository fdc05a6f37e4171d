/**
 * `/demo/*`: the built-in demo data, served from memory with HTTP Range support.
 *
 * Why memory: under `make run` GDAL reads the demo COGs back from this same process over
 * /vsicurl/, and each of those reads holds a libuv pool thread while it waits. A static-file server
 * needs pool threads too (fs reads), so a burst of mosaic tiles could take every thread and leave
 * the file reads — and the tiles waiting on them — stuck until the curl timeout. Buffers in memory
 * are answered on the event loop, with no pool thread at all. The demo data is a few megabytes.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const TYPES: Record<string, string> = {
  '.tif': 'image/tiff',
  '.json': 'application/json',
};

/** Refuses to hold more than this in memory (the demo is ~10 MB; a wrong folder is not loaded). */
const MAX_BYTES = 256 * 1024 * 1024;

async function loadFiles(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !(path.extname(entry.name) in TYPES)) continue;
    const body = await fs.readFile(path.join(dir, entry.name));
    total += body.length;
    if (total > MAX_BYTES) throw new Error(`demo folder ${dir} holds more than ${MAX_BYTES} bytes of data`);
    files.set(entry.name, body);
  }
  return files;
}

/** Parses a single `bytes=a-b` / `bytes=a-` / `bytes=-n` range; undefined when absent or not satisfiable. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'invalid' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'invalid';
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? 'invalid' : { start, end };
}

export function demoRoutes(dir: string) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const files = await loadFiles(dir);
    // Never compressed: byte ranges must stay ranges of the file itself.
    app.get<{ Params: { file: string } }>('/demo/:file', { compress: false }, async (request, reply) => {
      const body = files.get(request.params.file);
      if (!body) return reply.code(404).type('application/json').send({ detail: 'Not Found' });
      reply.header('accept-ranges', 'bytes').type(TYPES[path.extname(request.params.file)]!);
      const range = parseRange(request.headers.range, body.length);
      if (range === 'invalid') return reply.code(416).header('content-range', `bytes */${body.length}`).send();
      if (!range) return reply.send(body);
      return reply
        .code(206)
        .header('content-range', `bytes ${range.start}-${range.end}/${body.length}`)
        .send(body.subarray(range.start, range.end + 1));
    });
  };
}
