/**
 * A `RateLimiterStore` on Redis: several processes share one provider's quota.
 *
 * Every decision is one Lua script run in one round trip (`EVALSHA`), atomically over every limit
 * of the limiter, on the server's `TIME`: processes whose clocks disagree still agree on the
 * quota. The limiter-wide pause lives in Redis too, so a cooldown one process learned from a
 * `Retry-After` holds every process back. Each key expires once its state can no longer change a
 * decision; the keys of one limiter share a hash tag, so each script touches one slot of a Redis
 * Cluster. The store runs on `@sluice/redis`'s `RedisConnection`: its own (from a URL), or one of
 * the context shared with other Redis structures (`layerFromConnection`: a Cluster, an ioredis
 * client of the application).
 *
 * The connection never lets a take hang: no offline queue, a command timeout, no resending. When
 * Redis cannot answer, each limiter's store-down policy answers instead (`"fail-closed"`,
 * `"fail-open"` or `"local"`), the store reports itself degraded (a gauge and a log line), and
 * the first command that succeeds after ioredis reconnects ends the degraded mode.
 *
 * @since 2.0.0
 */
export * as RedisRateLimiterStore from "./RedisRateLimiterStore.js"
