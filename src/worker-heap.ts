/**
 * The V8 heap settings of tessera's worker threads (the render threads, the upstream gateway).
 *
 * `bin/tessera` starts node with a 128 MiB initial old generation for the main thread, whose
 * readers would otherwise run a major GC every ~80 ms under load. V8 flags are process-wide, so every
 * worker isolate got it too, and there it mostly kept garbage: a render thread's JavaScript heap is
 * ~10 MiB, but the typed arrays of the images it post-processed stayed allocated until a major GC
 * that the large limit put off. Measured on the benchmark's data, warm, the servers up at once and
 * the tile mixes (stac-rgb, mosaic, rgb-auto) alternated between them at c=1 and c=16, 3 × 5 s each,
 * medians; every one with 16 MiB semi-spaces (bin/tessera) unless said:
 *
 *   workers' initial old space   peak RSS   CPU per tile at c=16 (geometric mean, against the first row)
 *   128 MiB, default semi-spaces  964 MiB   1.00
 *   128 MiB                       950 MiB   0.99
 *   V8's default                  903 MiB   1.15 (stac-rgb 1.14, mosaic 1.00, rgb-auto 1.31)
 *   32 MiB                        891 MiB   0.99 (stac-rgb 1.21, mosaic 0.89, rgb-auto 0.90)
 *
 * Another run had it in every isolate at 978 MiB and in the main thread only at 893 MiB. Run-to-run
 * spread on this shared two-core machine is ±20% per mix, so the CPU column says "no loss" at 32 MiB
 * and at 128, a likely one with V8's default sizing; 32 MiB keeps the memory saved.
 *
 * The flag is read when an isolate is created, so setting it here, after the main isolate exists
 * and before any worker starts, sizes the workers alone.
 */
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/** MiB of old generation a worker isolate starts with before its first major GC (see above). */
const WORKER_INITIAL_OLD_SPACE_MB = 32;

let done = false;

/** Workers created from now on start with WORKER_INITIAL_OLD_SPACE_MB of old generation. Idempotent. */
export function sizeWorkerHeaps(): void {
  if (done || !isMainThread) return;
  done = true;
  v8.setFlagsFromString(`--initial-old-space-size=${WORKER_INITIAL_OLD_SPACE_MB}`);
}
