/** @internal */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { Cluster, Redis } from "ioredis"
import { createHash } from "node:crypto"
import * as Api from "../RedisConnection.js"

/** A command waits at most this long before the caller's store-down policy answers instead. */
const defaultCommandTimeoutMillis = 500
const defaultConnectTimeoutMillis = 2000
/** Reconnection backoff: 100 ms more per attempt, capped so that recovery is noticed within 1 s. */
const maxReconnectDelayMillis = 1000
const retryStrategy = (times: number) => Math.min(times * 100, maxReconnectDelayMillis)
/**
 * How often a Cluster's subscriber reads the slot map at the latest: after a failover it subscribes
 * again at the new master within this (plus a connection), even when no command of this process
 * touched the slot.
 */
const subscriberSlotsRefreshMillis = 500

/** @internal */
export const errorText = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

const isNoScript = (cause: unknown): boolean => errorText(cause).startsWith("NOSCRIPT")

/** @internal */
export const script = (name: string, lua: string): Api.Script => ({
  name,
  lua,
  sha: createHash("sha1").update(lua).digest("hex")
})

// -----------------------------------------------------------------------------
// validation: every reason names the option and the value
// -----------------------------------------------------------------------------

const showInput = (input: unknown): string =>
  typeof input === "string"
    ? JSON.stringify(input)
    : Duration.isDuration(input)
    ? Duration.format(input)
    : String(input)

/** `Duration` reads `-5 seconds` and `-1` as zero: a minus sign is a mistake to name. */
const isNegative = (input: unknown): boolean =>
  ((typeof input === "number" || typeof input === "bigint") && input < 0) ||
  (typeof input === "string" && /^\s*-/.test(input)) ||
  (Array.isArray(input) && input.some((part) => (typeof part === "number" || typeof part === "bigint") && part < 0))

const decodeMillis = (label: string, input: unknown, fallback: number): Either.Either<number, string> => {
  if (input === undefined) return Either.right(fallback)
  const refused = Either.left(`${label} must be a finite duration > 0, got ${showInput(input)}`)
  if (isNegative(input)) return refused
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(`${label} must be a duration, got ${showInput(input)}`)
  const millis = Duration.toMillis(decoded.value)
  return millis > 0 && Number.isFinite(millis) ? Either.right(millis) : refused
}

/** A Redis URL, or why not (a URL given as `Redacted` is never printed). */
const checkUrl = (input: unknown): Either.Either<string, string> => {
  const redacted = Redacted.isRedacted(input)
  // no default server: a connection that guessed localhost would hide a missing setting
  if (input === undefined) return Either.left("url is needed (redis://host:port), or cluster, or client")
  const url = redacted ? Redacted.value(input) : input
  if (typeof url !== "string" || url.length === 0) return Either.left("url must be a non-empty string")
  const shown = redacted ? "(redacted)" : JSON.stringify(url)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left(`url must be a URL such as redis://host:6379, got ${shown}`)
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    if (parsed.password !== "") parsed.password = "***"
    return Either.left(`url must use redis:// or rediss://, got ${redacted ? shown : JSON.stringify(parsed.href)}`)
  }
  if (parsed.hostname === "") return Either.left(`url must name a host (redis://host:port), got ${shown}`)
  return Either.right(url)
}

interface Resolved {
  readonly commandTimeoutMillis: number
  readonly connectTimeoutMillis: number
}

const resolveTimeouts = (options: Api.Timeouts): Either.Either<Resolved, string> =>
  Either.all({
    commandTimeoutMillis: decodeMillis("commandTimeout", options.commandTimeout, defaultCommandTimeoutMillis),
    connectTimeoutMillis: decodeMillis("connectTimeout", options.connectTimeout, defaultConnectTimeoutMillis)
  })

/** @internal */
export const check = <O extends Api.Options>(options: O): Either.Either<O, string> => {
  if ("client" in options) {
    const client: unknown = options.client
    return typeof client === "object" && client !== null && "evalsha" in client
      ? Either.right(options)
      : Either.left(`client must be an ioredis Redis or Cluster, got ${String(client)}`)
  }
  if ("cluster" in options) {
    if (!Array.isArray(options.cluster) || options.cluster.length === 0) {
      return Either.left(`cluster must name at least one node, got ${JSON.stringify(options.cluster)}`)
    }
  } else {
    const url = checkUrl(options.url)
    if (Either.isLeft(url)) return Either.left(url.left)
  }
  return Either.map(resolveTimeouts(options), () => options)
}

// -----------------------------------------------------------------------------
// the client
// -----------------------------------------------------------------------------

/**
 * The settings that keep a command from hanging while Redis is down: fail at once when
 * disconnected, give up after the timeout, never resend (a script may have run).
 */
const noHang = (commandTimeout: number) => ({
  enableOfflineQueue: false,
  commandTimeout,
  maxRetriesPerRequest: 0
})

const offlineQueueWarning = "Redis connection: the ioredis client given has enableOfflineQueue on, so a command " +
  "waits while Redis is down instead of failing at once; set enableOfflineQueue: false, maxRetriesPerRequest: 0 " +
  "and a commandTimeout on it for the store-down policy to answer"

const open = (options: Api.FromUrl | Api.FromCluster, timeouts: Resolved): Redis | Cluster => {
  const { commandTimeoutMillis, connectTimeoutMillis } = timeouts
  if ("cluster" in options) {
    const given = options.clusterOptions ?? {}
    return new Cluster([...options.cluster], {
      clusterRetryStrategy: retryStrategy,
      ...given,
      enableOfflineQueue: false,
      redisOptions: {
        connectTimeout: connectTimeoutMillis,
        ...given.redisOptions,
        // the node connections keep their offline queue: ioredis opens them at their first
        // command, which would fail at once without it; the command timeout still bounds it
        commandTimeout: commandTimeoutMillis,
        maxRetriesPerRequest: 0
      }
    })
  }
  // `check` has refused a missing url before a client is opened
  const url = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url ?? ""
  return new Redis(url, {
    retryStrategy,
    connectTimeout: connectTimeoutMillis,
    ...options.redis,
    ...noHang(commandTimeoutMillis)
  })
}

/** Builds the client the options describe, or takes the application's; owned ones close with the scope. */
const clientOf = (
  options: Api.Options
): Effect.Effect<{ readonly client: Redis | Cluster; readonly connectTimeoutMillis: number }, never, Scope.Scope> =>
  Effect.suspend(() => {
    const checked = check(options)
    if (Either.isLeft(checked)) {
      return Effect.die(new Cause.IllegalArgumentException(`Redis connection: ${checked.left}`))
    }
    if ("client" in options) {
      const client = options.client
      const offlineQueue = client instanceof Cluster
        ? client.options.enableOfflineQueue
        : client.options.enableOfflineQueue
      return Effect.as(
        offlineQueue !== false ? Effect.logWarning(offlineQueueWarning) : Effect.void,
        { client, connectTimeoutMillis: defaultConnectTimeoutMillis }
      )
    }
    const timeouts = Either.getOrThrow(resolveTimeouts(options))
    return Effect.acquireRelease(
      Effect.sync(() => {
        const client = open(options, timeouts)
        // failures reach the callers through the commands; without a listener ioredis prints each one
        client.on("error", () => {})
        return { client, connectTimeoutMillis: timeouts.connectTimeoutMillis }
      }),
      ({ client }) => close(client)
    )
  })

/**
 * `QUIT` when connected (the connection then ends by itself), otherwise a disconnect. Not both: a
 * `Cluster` disconnected after its `QUIT` stays "disconnecting" for good.
 */
const close = (client: Redis | Cluster): Effect.Effect<void> =>
  client.status === "ready"
    ? Effect.catchAll(Effect.tryPromise(() => client.quit()), () => Effect.sync(() => client.disconnect()))
    : Effect.sync(() => client.disconnect())

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
            ? client.duplicate([], {
              shardedSubscribers: true,
              enableOfflineQueue: true,
              enableAutoPipelining: false,
              slotsRefreshInterval: subscriberSlotsRefreshMillis
            })
            : client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, enableAutoPipelining: false })
          sub.on("error", () => {})
          sub.on("smessage", onMessage)
          const followSlots = () => {
            if (sub instanceof Cluster && sub.status === "ready") sub.refreshSlotsCache()
          }
          // A failover moves a slot without closing the old master's connection (it unsubscribes
          // the slot's shard channels as it turns replica): ioredis subscribes again at the new
          // master only when the subscriber reads the new slot map, so it reads it whenever the
          // commands' client does (a MOVED reply), and at least every subscriberSlotsRefreshMillis.
          client.on("refresh", followSlots)
          subscriber = sub
          return { sub, followSlots }
        }),
        ({ followSlots, sub }) =>
          Effect.zipRight(
            Effect.sync(() => {
              client.off("refresh", followSlots)
            }),
            close(sub)
          )
      ).pipe(Effect.map(({ sub }) => sub), Scope.extend(subscriberScope))
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
            // Waits (bounded) for the subscription, so that the messages published from now on are
            // heard; when Redis is down it completes on connection, and the caller's periodic check
            // covers what is published meanwhile.
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
          Effect.suspend(() => {
            const set = handlers.get(channel)
            if (set === undefined) return Effect.void
            set.delete(handler)
            if (set.size > 0 || subscriber === undefined) return Effect.void
            handlers.delete(channel)
            const sub = subscriber
            // awaited (bounded): a reply arriving after the subscriber is closed finds no command
            // and ioredis raises it as an error nobody listens to
            return Effect.promise(() => sub.sunsubscribe(channel).then(() => true, () => false)).pipe(
              Effect.timeoutTo({
                duration: Duration.millis(connectTimeoutMillis),
                onSuccess: () => true,
                onTimeout: () => false
              }),
              Effect.asVoid
            )
          })
      )

    // After a restart or a failover the node has no script cache: NOSCRIPT means the script never
    // ran, so sending its text once (EVAL runs it and caches it on that node) cannot run it twice.
    // EVAL rather than SCRIPT LOAD: it carries the keys, so a Cluster routes it to the slot's node.
    const unsafeRunScript = (s: Api.Script, keyCount: number, keysAndArgs: ReadonlyArray<string>): Promise<unknown> =>
      client.evalsha(s.sha, keyCount, ...keysAndArgs).catch((cause: unknown) =>
        isNoScript(cause) ? client.eval(s.lua, keyCount, ...keysAndArgs) : Promise.reject(cause)
      )

    const runScript = (
      s: Api.Script,
      keys: ReadonlyArray<string>,
      args: ReadonlyArray<string>
    ): Effect.Effect<unknown, Api.RedisCommandError> =>
      Effect.async<unknown, Api.RedisCommandError>((resume) => {
        unsafeRunScript(s, keys.length, [...keys, ...args]).then(
          (reply) => resume(Effect.succeed(reply)),
          (cause) => resume(Effect.fail(new Api.RedisCommandError({ command: `script ${s.name}`, cause })))
        )
      })

    const loadScripts = (scripts: ReadonlyArray<Api.Script>): Effect.Effect<void, Api.RedisCommandError> =>
      Effect.forEach(
        client instanceof Cluster ? client.nodes("master") : [client],
        (node) =>
          Effect.forEach(scripts, (s) =>
            Effect.tryPromise({
              try: () => node.script("LOAD", s.lua),
              catch: (cause) => new Api.RedisCommandError({ command: `SCRIPT LOAD ${s.name}`, cause })
            }), { discard: true }),
        { discard: true }
      )

    yield* awaitReady(client, connectTimeoutMillis)
    return {
      client,
      runScript,
      unsafeRunScript,
      loadScripts,
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

const durationKey = (
  key: string,
  text: Option.Option<string>
): Either.Either<Duration.Duration | undefined, ConfigError.ConfigError> =>
  Option.match(text, {
    onNone: () => Either.right(undefined),
    onSome: (value) =>
      decodeMillis(key, value, 0).pipe(
        Either.map(Duration.millis),
        Either.mapLeft((reason) => ConfigError.InvalidData([key], reason))
      )
  })

/** @internal */
export const config: Config.Config<Api.FromUrl> = Config.all({
  url: Config.option(Config.redacted("URL")),
  // read as text: `Config.duration` reads "-5 seconds" as zero
  commandTimeout: Config.option(Config.string("COMMAND_TIMEOUT")),
  connectTimeout: Config.option(Config.string("CONNECT_TIMEOUT"))
}).pipe(
  Config.mapOrFail((input) =>
    Either.gen(function*() {
      const url = Option.getOrUndefined(input.url)
      const checked = checkUrl(url)
      if (Either.isLeft(checked)) return yield* Either.left(ConfigError.InvalidData(["URL"], checked.left))
      return {
        url,
        commandTimeout: yield* durationKey("COMMAND_TIMEOUT", input.commandTimeout),
        connectTimeout: yield* durationKey("CONNECT_TIMEOUT", input.connectTimeout)
      }
    })
  )
)
