/**
 * Rendered tiles kept for the next request for the same tile: in this process (an LRU bounded in
 * bytes) and, when a Redis URL is set, in Redis, shared by every replica (Valkey speaks the same
 * protocol). A tile is looked up in memory, then in Redis (a Redis hit is kept in memory too);
 * a tile made here is stored in both.
 *
 * Redis is a help, never a dependency: every Redis call is bounded (TIMEOUT_MS) and fails at once
 * while Redis is down (no offline queue), a failure counts as a miss, and the store keeps
 * reconnecting in the background. One warning is logged when Redis goes away, one when it is back.
 */
import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';

export interface StoredTile {
  /** Response headers worth replaying (content type, the mosaic's X-Assets …). */
  headers: Record<string, string>;
  body: Buffer;
}

export interface TileStoreOptions {
  /** Bytes the in-process tier may hold (0: none). */
  memoryBytes: number;
  /** How long a tile is kept, in seconds, in both tiers. */
  ttlSeconds: number;
  /** `redis://host:port/db` (or `rediss://`), or undefined for no shared tier. */
  redisUrl: string | undefined;
  /** Told when Redis goes away or comes back. */
  log?: (level: 'warn' | 'info', message: string) => void;
}

/** Counts for /metrics. */
export interface TierStats {
  hits: number;
  misses: number;
  errors: number;
}

/** A Redis call slower than this counts as a miss: a cache must not make tiles slower. */
const TIMEOUT_MS = 150;
/** Keys carry a version so that a change of the stored format never reads old entries. */
const KEY_PREFIX = 'tessera:tile:v1:';

export class TileStore {
  private readonly memory: LRUCache<string, StoredTile> | undefined;
  private readonly redis: Redis | undefined;
  private closing = false;
  readonly memoryStats: TierStats = { hits: 0, misses: 0, errors: 0 };
  readonly redisStats: TierStats = { hits: 0, misses: 0, errors: 0 };

  constructor(private readonly opts: TileStoreOptions) {
    if (opts.memoryBytes > 0) {
      this.memory = new LRUCache<string, StoredTile>({
        maxSize: opts.memoryBytes,
        sizeCalculation: (t) => t.body.length + 256,
        ttl: opts.ttlSeconds * 1000,
      });
    }
    if (opts.redisUrl) {
      this.redis = new Redis(opts.redisUrl, {
        lazyConnect: false,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 1000,
        commandTimeout: TIMEOUT_MS,
        // Keep trying, once a second: Redis coming back is noticed without a restart.
        retryStrategy: () => 1000,
      });
      // ioredis's own state says whether a command can go out now; these only log the changes.
      let reachable: boolean | undefined;
      this.redis.on('ready', () => {
        if (reachable !== true) opts.log?.('info', 'tile cache: Redis is reachable');
        reachable = true;
      });
      this.redis.on('close', () => {
        if (reachable !== false && !this.closing) opts.log?.('warn', 'tile cache: Redis is unreachable; tiles are made without it until it is back');
        reachable = false;
      });
      // Without a listener an error would end the process; the state above says what matters.
      this.redis.on('error', () => undefined);
    }
  }

  private get redisReady(): boolean {
    return this.redis?.status === 'ready';
  }

  get enabled(): boolean {
    return this.memory !== undefined || this.redis !== undefined;
  }

  async get(key: string): Promise<StoredTile | undefined> {
    const inMemory = this.memory?.get(key);
    if (inMemory) {
      this.memoryStats.hits++;
      return inMemory;
    }
    if (this.memory) this.memoryStats.misses++;
    if (!this.redis) return undefined;
    if (!this.redisReady) {
      this.redisStats.errors++;
      return undefined;
    }
    try {
      const raw = await this.redis.getBuffer(KEY_PREFIX + key);
      if (!raw) {
        this.redisStats.misses++;
        return undefined;
      }
      const tile = decode(raw);
      this.redisStats.hits++;
      this.memory?.set(key, tile);
      return tile;
    } catch {
      this.redisStats.errors++;
      return undefined;
    }
  }

  /** Stores a tile; the Redis write is not waited for (and its failure only counted). */
  set(key: string, tile: StoredTile): void {
    this.memory?.set(key, tile);
    if (!this.redis || !this.redisReady) return;
    this.redis.set(KEY_PREFIX + key, encode(tile), 'EX', Math.max(1, this.opts.ttlSeconds)).catch(() => {
      this.redisStats.errors++;
    });
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    this.closing = true;
    this.redis.disconnect();
  }
}

/** [4-byte length of the headers' JSON][headers JSON][body]. */
function encode(tile: StoredTile): Buffer {
  const headers = Buffer.from(JSON.stringify(tile.headers), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headers.length);
  return Buffer.concat([length, headers, tile.body]);
}

function decode(raw: Buffer): StoredTile {
  const length = raw.readUInt32BE(0);
  const headers = JSON.parse(raw.subarray(4, 4 + length).toString('utf8')) as Record<string, string>;
  return { headers, body: raw.subarray(4 + length) };
}
