/**
 * One Redis connection for every Redis structure of sluice in a process (the rate limiter's store,
 * the distributed bulkhead): built from a URL or ioredis options, from Cluster nodes, or wrapping
 * an ioredis `Redis` or `Cluster` the application already has.
 *
 * It runs Lua scripts by `EVALSHA`, sending the text again with `EVAL` on `NOSCRIPT` (a restarted
 * or failed-over node has no script cache), and keeps one subscriber connection for every shard
 * channel (`SSUBSCRIBE`) of the process. A connection it builds never lets a command hang: no
 * offline queue, a command timeout, no resending. On a Cluster, ioredis follows `MOVED` and `ASK`;
 * each structure keeps its keys under one hash tag, so every script touches one slot.
 *
 * @since 0.1.0
 */
import * as RedisMessages from "@sluice/core/RedisMessages"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from "ioredis"
import * as internal from "./internal/redisConnection.js"

/**
 * How to reach Redis: a URL and ioredis options, or Cluster nodes (the connection is opened here
 * and closed with the scope), or an ioredis `Redis` or `Cluster` instance the application owns
 * (used as it is and never closed here; a subscriber connection duplicated from it is).
 *
 * @since 0.1.0
 * @category models
 */
export type Options = FromUrl | FromCluster | FromClient

/**
 * The timeouts of a connection opened here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Timeouts {
  /** The longest a command may take before the caller's store-down policy answers. Default 500 ms. */
  readonly commandTimeout?: Duration.DurationInput | undefined
  /** How long one connection attempt may take, and how long building waits for it. Default 2 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
}

/**
 * One Redis server (or a proxy in front of several).
 *
 * @since 0.1.0
 * @category models
 */
export interface FromUrl extends Timeouts {
  /**
   * `redis://[user:password@]host:port[/db]` (or `rediss://`), naming a host. Needed: there is no
   * default server, so `{}` or `redis://` is refused rather than silently meaning localhost.
   */
  readonly url?: string | Redacted.Redacted<string> | undefined
  /**
   * More ioredis options (TLS, credentials, `retryStrategy`, ...). The connection always sets
   * `enableOfflineQueue: false`, `maxRetriesPerRequest: 0` and `commandTimeout`, which keep a
   * command from hanging while Redis is down and a script from being sent twice.
   * `enableAutoPipelining: true` sends the commands of one turn of the event loop in one socket
   * write: less CPU per call, but the calls then move in step with Redis (see the README).
   */
  readonly redis?: RedisOptions | undefined
}

/**
 * A Redis Cluster, from some of its nodes (ioredis discovers the rest).
 *
 * @since 0.1.0
 * @category models
 */
export interface FromCluster extends Timeouts {
  /** Startup nodes: `{ host, port }`, `"host:port"` or a port. At least one. */
  readonly cluster: ReadonlyArray<ClusterNode>
  /**
   * More ioredis Cluster options (`redisOptions` for credentials and TLS, `natMap`, ...). The
   * connection always sets `enableOfflineQueue: false` on the cluster and `maxRetriesPerRequest: 0`
   * and `commandTimeout` on its nodes.
   */
  readonly clusterOptions?: ClusterOptions | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface FromClient {
  /**
   * The application's client. Give a `Redis` `enableOfflineQueue: false`, `maxRetriesPerRequest: 0`
   * and a `commandTimeout`, so that commands fail rather than wait while Redis is down; a `Cluster`
   * `enableOfflineQueue: false` and, in `redisOptions`, `maxRetriesPerRequest: 0` and a
   * `commandTimeout` (its node connections keep their offline queue: ioredis opens them at their
   * first command). A warning is logged when the client's offline queue is on.
   */
  readonly client: Redis | Cluster
}

/**
 * A Lua script: its text and SHA-1, computed once.
 *
 * @since 0.1.0
 * @category models
 */
export interface Script {
  readonly name: string
  readonly lua: string
  readonly sha: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The ioredis client, for commands of your own. */
  readonly client: Redis | Cluster
  /**
   * Runs a script in one round trip (`EVALSHA`; on `NOSCRIPT` the text once more with `EVAL`, which
   * caches it on that node). All `keys` must share a hash tag. Fails with `RedisCommandError` when
   * Redis cannot answer.
   */
  readonly runScript: (
    script: Script,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string>
  ) => Effect.Effect<unknown, RedisCommandError>
  /**
   * `runScript` as a promise, for a caller whose whole client side is one `Effect.async` (the
   * limiter's take): the first `keyCount` of `keysAndArgs` are the keys. Rejects with ioredis' error.
   */
  readonly unsafeRunScript: (script: Script, keyCount: number, keysAndArgs: ReadonlyArray<string>) => Promise<unknown>
  /**
   * Loads scripts into the script cache (`SCRIPT LOAD`) of the server, or of every master of a
   * Cluster, so that the first calls are `EVALSHA` hits.
   */
  readonly loadScripts: (scripts: ReadonlyArray<Script>) => Effect.Effect<void, RedisCommandError>
  /**
   * Calls `handler` with each message published (`SPUBLISH`) on a shard channel, for the
   * lifetime of the scope. One subscriber connection serves every channel.
   */
  readonly subscribe: (channel: string, handler: (message: string) => void) => Effect.Effect<void, never, Scope.Scope>
  /** Whether the client is connected and ready right now. */
  readonly isReady: () => boolean
  /**
   * A command's failure as its error should show it: one refused for want of a connection (while
   * the client is not ready) becomes `no connection to Redis at <address> (last error: <the last
   * connection error>; <status>)`, the original as its `cause`; any other is returned as it is.
   * Never shows a password.
   */
  readonly explain: (cause: unknown) => unknown
}

/**
 * The connection as a service.
 *
 * @since 0.1.0
 * @category tags
 */
export class RedisConnection extends Context.Tag("@sluice/redis/RedisConnection")<
  RedisConnection,
  Service
>() {}

/**
 * A command that Redis did not answer (unreachable, timed out, refused), naming the command.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisCommandError extends Data.TaggedError("RedisCommandError")<{
  readonly command: string
  readonly cause: unknown
}> {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return RedisMessages.commandFailed(this.command, this.cause)
  }
}

/**
 * A script from its name and text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const script: (name: string, lua: string) => Script = internal.script

/**
 * Checks options as `make` does, without connecting: the reason names the option and the value (a
 * URL given as `Redacted` is never shown). For a layer of its own that validates up front.
 *
 * @since 0.1.0
 * @category validation
 */
export const check: <O extends Options>(options: O) => Either.Either<O, string> = internal.check

/**
 * Opens the connection in the current scope (waiting up to `connectTimeout` for it; it does not
 * fail when Redis is unreachable, its commands do). Invalid options are a defect naming the option
 * and the value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Service, never, Scope.Scope> = internal.make

/**
 * The connection as a layer.
 *
 * @example
 * ```ts
 * import { RedisConnection } from "@sluice/redis"
 * import { Cluster } from "ioredis"
 *
 * // from a URL
 * const Single = RedisConnection.layer({ url: "redis://127.0.0.1:6379" })
 *
 * // a Cluster opened (and closed) by the layer
 * const Owned = RedisConnection.layer({ cluster: [{ host: "127.0.0.1", port: 7000 }] })
 *
 * // from the application's Cluster client, left open
 * const cluster = new Cluster([{ host: "127.0.0.1", port: 7000 }], {
 *   enableOfflineQueue: false,
 *   redisOptions: { maxRetriesPerRequest: 0, commandTimeout: 500 }
 * })
 * const Clustered = RedisConnection.layer({ client: cluster })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (options: Options) => Layer.Layer<RedisConnection> = internal.layer

/**
 * The connection as a layer, its options read from `Config` (see `config`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: (
  config: Config.Config<FromUrl>
) => Layer.Layer<RedisConnection, ConfigError.ConfigError> = internal.layerConfig

/**
 * The URL options as `Config`, validated: `URL` (read as `Redacted`), `COMMAND_TIMEOUT`,
 * `CONNECT_TIMEOUT` (durations). Nest it: `Config.nested(RedisConnection.config, "REDIS")`.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<FromUrl> = internal.config
