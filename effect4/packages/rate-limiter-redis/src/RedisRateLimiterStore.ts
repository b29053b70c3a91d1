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
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import type * as RedisConnection from "@sluice/redis/RedisConnection"
import type * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type { RedisOptions } from "ioredis"
import * as internal from "./internal/redisStore.js"

/**
 * What a limiter's takes get while Redis cannot answer:
 *
 * - `"fail-closed"` (default): the take fails with `RateLimiterStoreError`. Nothing starts that
 *   the shared quota did not allow.
 * - `"fail-open"`: the take starts at once (a pause this process knows of is still honoured). The
 *   upstream sees the unlimited rate of every process.
 * - `"local"`: the take is decided by an in-process limiter at `localShare` of each limit (say
 *   `0.25` when four processes share the quota). Its reservations stay local: the first takes
 *   after recovery are decided by Redis alone, which did not see them.
 *
 * @since 2.0.0
 * @category models
 */
export type StoreDownPolicy = "fail-closed" | "fail-open" | "local"

/**
 * The store-down policy of one limiter.
 *
 * @since 2.0.0
 * @category models
 */
export interface LimiterPolicy {
  readonly storeDown: StoreDownPolicy
  /** With `"local"`: the share of each limit this process may use alone, in (0, 1]. Required. */
  readonly localShare?: number | undefined
}

/**
 * The store's own options, for a store on a `RedisConnection` of the context (`layerFromConnection`).
 *
 * @since 2.0.0
 * @category models
 */
export interface StoreOptions {
  /** Prepended to every key; no braces. Default `"sluice:rl:"`. */
  readonly prefix?: string | undefined
  /** The store-down policy of every limiter not named in `limiters`. Default `"fail-closed"`. */
  readonly storeDown?: StoreDownPolicy | undefined
  /** With `storeDown: "local"`: the share of each limit a process may use alone, in (0, 1]. */
  readonly localShare?: number | undefined
  /** Store-down policies by limiter name (the limiter's store key). */
  readonly limiters?: { readonly [name: string]: LimiterPolicy } | undefined
  /**
   * The clock that decides. `"server"` (default): Redis' `TIME`, the only sound choice across
   * processes. `"client"`: Effect's `Clock` of the caller, sent with each command — for tests
   * under `TestClock` (the rate limiter's contract suite) only; keys then live a minute longer
   * than their state needs.
   */
  readonly clock?: "server" | "client" | undefined
}

/**
 * The store with a connection of its own, opened from a URL (see `@sluice/redis`'s
 * `RedisConnection` for a Cluster or an ioredis client you have, with `layerFromConnection`).
 *
 * @since 2.0.0
 * @category models
 */
export interface Options extends StoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). Default `redis://127.0.0.1:6379`. */
  readonly url?: string | Redacted.Redacted<string> | undefined
  /**
   * More ioredis options (TLS, credentials, `retryStrategy`, ...). Auto-pipelining is best left
   * off (ioredis' default): the store sends the takes of one tick in one socket write itself. The
   * connection always sets `enableOfflineQueue: false`, `maxRetriesPerRequest: 0` and
   * `commandTimeout`, which keep a take from hanging and a decision from being sent twice.
   */
  readonly redis?: RedisOptions | undefined
  /**
   * The longest a command may take before the store-down policy answers instead (the command may
   * still run in Redis: its reservation is then lost, which errs on the side of the quota).
   * Default 500 ms.
   */
  readonly commandTimeout?: Duration.Input | undefined
  /**
   * How long one connection attempt may take, and how long building the store waits for the first
   * connection (it then starts degraded rather than failing). Default 2 s.
   */
  readonly connectTimeout?: Duration.Input | undefined
}

/**
 * Creates the store; its connection lives in the current scope and is closed (`QUIT`) with it.
 * Invalid options are a defect whose message names the option and the value. Building does not
 * fail when Redis is unreachable: it waits up to `connectTimeout` and then starts degraded.
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> = internal.make

/**
 * Creates the store on the `RedisConnection` of the context (a URL, a Cluster, or an ioredis client
 * of the application: see `@sluice/redis`), which it shares with every other Redis structure of
 * the process and leaves open. Invalid options are a defect naming the option and the value.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeFromConnection: (
  options: StoreOptions
) => Effect.Effect<RateLimiterStore.Service, never, Scope.Scope | RedisConnection.RedisConnection> =
  internal.makeFromConnection

/**
 * The store as the `RateLimiterStore` service, with a connection of its own.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@sluice/rate-limiter"
 * import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
 * import { Effect, Layer } from "effect"
 *
 * class Nominatim extends RateLimiter.Tag("nominatim")<Nominatim>() {}
 *
 * // every process running this shares one 1-per-second quota
 * const NominatimLive = Nominatim.layer({ limit: 1, window: "1 second", maxWait: "30 seconds" }).pipe(
 *   Layer.provide(
 *     RedisRateLimiterStore.layer({ url: "redis://127.0.0.1:6379", storeDown: "local", localShare: 0.25 })
 *   )
 * )
 *
 * const lookup = (q: string) => Effect.flatMap(Nominatim, (limiter) => limiter.run(Effect.succeed(q)))
 * const main = lookup("Lyon").pipe(Effect.provide(NominatimLive))
 * ```
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: (options: Options) => Layer.Layer<RateLimiterStore.RateLimiterStore> = internal.layer

/**
 * The store as the `RateLimiterStore` service, on the `RedisConnection` of the context: the way to
 * a Redis Cluster, or to one connection shared with the distributed bulkhead.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@sluice/rate-limiter"
 * import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
 * import { RedisConnection } from "@sluice/redis"
 * import { Layer } from "effect"
 *
 * class Nominatim extends RateLimiter.Tag("nominatim")<Nominatim>() {}
 *
 * // every key of a limiter shares one hash tag: one slot, one node per script
 * const NominatimLive = Nominatim.layer({ limit: 1, window: "1 second" }).pipe(
 *   Layer.provide(RedisRateLimiterStore.layerFromConnection({ storeDown: "fail-closed" })),
 *   Layer.provide(RedisConnection.layer({ cluster: [{ host: "127.0.0.1", port: 7000 }] }))
 * )
 * ```
 *
 * @since 2.0.0
 * @category layers
 */
export const layerFromConnection: (
  options: StoreOptions
) => Layer.Layer<RateLimiterStore.RateLimiterStore, never, RedisConnection.RedisConnection> =
  internal.layerFromConnection

/**
 * The store as the `RateLimiterStore` service, its options read from `Config` (see `config`).
 *
 * @since 2.0.0
 * @category layers
 */
export const layerConfig: (
  config: Config.Config<Options>
) => Layer.Layer<RateLimiterStore.RateLimiterStore, Config.ConfigError> = internal.layerConfig

/**
 * The options as `Config`, validated: `URL` (redacted), `PREFIX`, `STORE_DOWN` (`fail-closed`,
 * `fail-open` or `local`), `LOCAL_SHARE` (required with `local`), `COMMAND_TIMEOUT` and
 * `CONNECT_TIMEOUT` (durations; the URL and both durations as `RedisConnection.config` reads them).
 * Nest it: `Config.nested(RedisRateLimiterStore.config, "REDIS")`.
 *
 * @since 2.0.0
 * @category config
 */
export const config: Config.Config<Options> = internal.config

/**
 * `sluice_limiter_store_degraded`: 1 while the store cannot reach Redis and limiters apply their
 * store-down policy, 0 otherwise; with the attribute `prefix`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const degraded: Metric.Gauge<number> = internal.degradedGauge

/**
 * `sluice_limiter_store_errors_total`: commands that failed or were not sent because Redis was
 * unreachable; with the attribute `prefix`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const errorsTotal: Metric.Counter<number> = internal.errorsTotal

/**
 * The Redis keys of one limiter: its state (counters, pause, GCRA and fixed-window state, one
 * binary string), then one list per limit (the log of a sliding window). All share the hash tag
 * `{key}`, as does the key `refund` keeps cancelled reservations in (the state's name plus
 * `:cancelled`).
 *
 * @since 2.0.0
 * @category keys
 */
export const keysOf: (prefix: string, key: string, limits: number) => Array<string> = internal.keysOf
