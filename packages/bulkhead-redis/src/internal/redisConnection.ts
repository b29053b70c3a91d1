/** @internal */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { Cluster, Redis } from "ioredis"
import { createHash } from "node:crypto"
import * as Api from "../RedisConnection.js"

/** @internal */
export const defaultUrl = "redis://127.0.0.1:6379"
/** A command waits at most this long before the caller's store-down policy answers instead. */
const defaultCommandTimeoutMillis = 500
const defaultConnectTimeoutMillis = 2000
/** Reconnection backoff: 100 ms more per attempt, capped so that recovery is noticed within 1 s. */
const maxReconnectDelayMillis = 1000

/** @internal */
export const errorText = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

const isNoScript = (cause: unknown): boolean => errorText(cause).startsWith("NOSCRIPT")

/** @internal */
export const script = (name: string, lua: string): Api.Script => ({
  name,
  lua,
  sha: createHash("sha1").update(lua).digest("hex")
})

const decodeMillis = (label: string, input: Duration.DurationInput | undefined, fallback: number): number => {
  if (input === undefined) return fallback
  const decoded = Option.getOrUndefined(Duration.decodeUnknown(input))
  const millis = decoded === undefined ? Number.NaN : Duration.toMillis(decoded)
  if (!(millis > 0 && Number.isFinite(millis))) {
    throw new Cause.IllegalArgumentException(
      `Redis connection: ${label} must be a finite duration > 0, got ${String(input)}`
    )
  }
  return millis
}

/**
 * The settings that keep a command from hanging while Redis is down: fail at once when
 * disconnected, give up after the timeout, never resend (a script may have run).
 */
const noHang = (commandTimeout: number) => ({
  enableOfflineQueue: false,
  commandTimeout,
  maxRetriesPerRequest: 0
})

/** Builds the client the options describe, or takes the application's; owned ones close with the scope. */
const clientOf = (
  options: Api.Options
): Effect.Effect<{ readonly client: Redis | Cluster; readonly connectTimeoutMillis: number }, never, Scope.Scope> => {
  if ("client" in options) {
    return Effect.gen(function*() {
      const client = options.client
      const offlineQueue = client instanceof Cluster
        ? client.options.enableOfflineQueue
        : client.options.enableOfflineQueue
      if (offlineQueue !== false) {
        yield* Effect.logWarning(
          "Redis connection: the ioredis client given has enableOfflineQueue on, so a command waits while Redis is " +
            "down instead of failing at once; set enableOfflineQueue: false, maxRetriesPerRequest: 0 and a " +
            "commandTimeout on it for the store-down policy to answer"
        )
      }
      return { client, connectTimeoutMillis: defaultConnectTimeoutMillis }
    })
  }
  return Effect.suspend(() => {
    const commandTimeout = decodeMillis("commandTimeout", options.commandTimeout, defaultCommandTimeoutMillis)
    const connectTimeout = decodeMillis("connectTimeout", options.connectTimeout, defaultConnectTimeoutMillis)
    const url = options.url === undefined
      ? defaultUrl
      : Redacted.isRedacted(options.url)
      ? Redacted.value(options.url)
      : options.url
    return Effect.acquireRelease(
      Effect.sync(() => {
        const client = new Redis(url, {
          retryStrategy: (times) => Math.min(times * 100, maxReconnectDelayMillis),
          connectTimeout,
          ...options.redis,
          ...noHang(commandTimeout)
        })
        // failures reach the callers through the commands; without a listener ioredis prints each one
        client.on("error", () => {})
        return { client, connectTimeoutMillis: connectTimeout }
      }),
      ({ client }) => close(client)
    )
  })
}

const close = (client: Redis | Cluster): Effect.Effect<void> =>
  Effect.zipRight(
    client.status === "ready"
      ? Effect.ignore(Effect.tryPromise(() => client.quit()))
      : Effect.void,
    Effect.sync(() => client.disconnect())
  )

/** Waits (bounded) for a connection to be ready; answers whether it is. */
const awaitReady = (client: Redis | Cluster, millis: number): Effect.Effect<boolean> =>
  client.status === "ready" ? Effect.succeed(true) : Effect.async<boolean>((resume) => {
    const onReady = () => resume(Effect.succeed(true))
    client.once("ready", onReady)
    return Effect.sync(() => {
      client.off("ready", onReady)
    })
  }).pipe(Effect.timeoutTo({ duration: Duration.millis(millis), onSuccess: (ready) => ready, onTimeout: () => false }))

/** @internal */
export const make = (options: Api.Options): Effect.Effect<Api.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, connectTimeoutMillis } = yield* clientOf(options)

    // One subscriber connection for every shard channel of this connection, opened on first use:
    // pub/sub takes a connection of its own. On a Cluster, ioredis keeps one per master.
    const handlers = new Map<string, Set<(message: string) => void>>()
    let subscriber: Redis | Cluster | undefined
    const subscriberScope = yield* Effect.scope
    const onMessage = (channel: string, message: string) => {
      const set = handlers.get(channel)
      if (set !== undefined) { for (const handler of set) handler(message) }
    }
    const openSubscriber = Effect.suspend(() => {
      if (subscriber !== undefined) return Effect.succeed(subscriber)
      return Effect.acquireRelease(
        Effect.sync(() => {
          // Offline queue on: a subscription asked for while disconnected is sent on connection,
          // and ioredis subscribes again after each reconnect.
          const sub = client instanceof Cluster
            ? client.duplicate([], { shardedSubscribers: true, enableOfflineQueue: true })
            : client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null })
          sub.on("error", () => {})
          sub.on("smessage", onMessage)
          subscriber = sub
          return sub
        }),
        (sub) => close(sub)
      ).pipe(Scope.extend(subscriberScope))
    })

    const subscribe = (channel: string, handler: (message: string) => void): Effect.Effect<void, never, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.flatMap(openSubscriber, (sub) =>
          Effect.suspend(() => {
            const existing = handlers.get(channel)
            if (existing !== undefined) {
              existing.add(handler)
              return Effect.void
            }
            handlers.set(channel, new Set([handler]))
            // Waits (bounded) for the subscription, so that the grants published from now on are
            // heard; when Redis is down it completes on connection, and the periodic check covers
            // the grants published meanwhile.
            return Effect.promise(() => sub.ssubscribe(channel).then(() => true, () => false)).pipe(
              Effect.timeoutTo({
                duration: Duration.millis(connectTimeoutMillis),
                onSuccess: () => true,
                onTimeout: () => false
              }),
              Effect.asVoid
            )
          })),
        () =>
          Effect.sync(() => {
            const set = handlers.get(channel)
            if (set === undefined) return
            set.delete(handler)
            if (set.size === 0) {
              handlers.delete(channel)
              subscriber?.sunsubscribe(channel).catch(() => {})
            }
          })
      )

    const runScript = (
      s: Api.Script,
      keys: ReadonlyArray<string>,
      args: ReadonlyArray<string>
    ): Effect.Effect<unknown, Api.RedisCommandError> =>
      Effect.async<unknown, Api.RedisCommandError>((resume) => {
        const fail = (cause: unknown) =>
          resume(Effect.fail(new Api.RedisCommandError({ command: `script ${s.name}`, cause })))
        const succeed = (reply: unknown) => resume(Effect.succeed(reply))
        // After a restart or a failover the server has no script cache: NOSCRIPT means it never
        // ran, so sending the text once (EVAL runs it and caches it on that node) cannot run it twice.
        client.evalsha(s.sha, keys.length, ...keys, ...args).then(succeed, (cause) => {
          if (!isNoScript(cause)) return fail(cause)
          client.eval(s.lua, keys.length, ...keys, ...args).then(succeed, fail)
        })
      })

    yield* awaitReady(client, connectTimeoutMillis)
    return {
      client,
      runScript,
      subscribe,
      isReady: () => client.status === "ready"
    }
  })

/** @internal */
export const layer = (options: Api.Options): Layer.Layer<Api.RedisConnection> =>
  Layer.scoped(Api.RedisConnection, make(options))

/** @internal */
export const layerConfig = (
  config: Config.Config<Api.FromUrl>
): Layer.Layer<Api.RedisConnection, ConfigError.ConfigError> =>
  Layer.scoped(Api.RedisConnection, Effect.flatMap(config, make))

/** @internal */
export const config: Config.Config<Api.FromUrl> = Config.all({
  url: Config.option(Config.redacted("URL")),
  commandTimeout: Config.option(Config.duration("COMMAND_TIMEOUT")),
  connectTimeout: Config.option(Config.duration("CONNECT_TIMEOUT"))
}).pipe(
  Config.map((input): Api.FromUrl => ({
    url: Option.getOrUndefined(input.url),
    commandTimeout: Option.getOrUndefined(input.commandTimeout),
    connectTimeout: Option.getOrUndefined(input.connectTimeout)
  }))
)
