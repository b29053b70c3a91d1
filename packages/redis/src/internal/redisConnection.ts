/** @internal */
import * as LimiterCommands from "@sluice/core/LimiterCommands"
import * as OptionMessages from "@sluice/core/OptionMessages"
import * as RedisMessages from "@sluice/core/RedisMessages"
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

/** @internal */
export const script = (name: string, lua: string): Api.Script => ({
  name,
  lua,
  sha: createHash("sha1").update(lua).digest("hex")
})

// -----------------------------------------------------------------------------
// validation: every reason names the option and the value (the sentences are the core's)
// -----------------------------------------------------------------------------

const toEither = <A>(reading: RedisMessages.Reading<A>): Either.Either<A, string> =>
  reading._tag === "Read" ? Either.right(reading.value) : Either.left(reading.reason)

const durations = {
  toMillis: (input: unknown) => Option.getOrUndefined(Option.map(Duration.decodeUnknown(input), Duration.toMillis)),
  showDuration: (input: unknown) =>
    Duration.isDuration(input)
      ? OptionMessages.formatDuration(Option.getOrUndefined(Duration.toNanos(input)))
      : undefined
}

const decodeMillis = (label: string, input: unknown, fallback: number): Either.Either<number, string> =>
  toEither(RedisMessages.readMillis(label, input, fallback, durations))

/** A Redis URL, or why not (a URL given as `Redacted` is never printed). */
const checkUrl = (input: unknown): Either.Either<string, string> =>
  Redacted.isRedacted(input)
    ? toEither(RedisMessages.readUrl(Redacted.value(input), true))
    : toEither(RedisMessages.readUrl(input, false))

interface Resolved {
  readonly commandTimeoutMillis: number
  readonly connectTimeoutMillis: number
}

const resolveTimeouts = (options: Api.Timeouts): Either.Either<Resolved, string> =>
  Either.all({
    commandTimeoutMillis: decodeMillis(
      "commandTimeout",
      options.commandTimeout,
      RedisMessages.defaultCommandTimeoutMillis
    ),
    connectTimeoutMillis: decodeMillis(
      "connectTimeout",
      options.connectTimeout,
      RedisMessages.defaultConnectTimeoutMillis
    )
  })

/** @internal */
export const check = <O extends Api.Options>(options: O): Either.Either<O, string> => {
  const refusal = "client" in options
    ? RedisMessages.clientRefusal(options.client)
    : "cluster" in options
    ? RedisMessages.clusterRefusal(options.cluster)
    : Either.getLeft(checkUrl(options.url)).pipe(Option.getOrUndefined)
  if (refusal !== undefined) return Either.left(refusal)
  return "client" in options ? Either.right(options) : Either.map(resolveTimeouts(options), () => options)
}

// -----------------------------------------------------------------------------
// the client
// -----------------------------------------------------------------------------

const open = (options: Api.FromUrl | Api.FromCluster, timeouts: Resolved): Redis | Cluster => {
  const { commandTimeoutMillis, connectTimeoutMillis } = timeouts
  if ("cluster" in options) {
    const given = options.clusterOptions ?? {}
    return new Cluster([...options.cluster], {
      clusterRetryStrategy: RedisMessages.retryStrategy,
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
    retryStrategy: RedisMessages.retryStrategy,
    connectTimeout: connectTimeoutMillis,
    ...options.redis,
    ...RedisMessages.noHang(commandTimeoutMillis)
  })
}

/** Builds the client the options describe, or takes the application's; owned ones close with the scope. */
const clientOf = (
  options: Api.Options
): Effect.Effect<{ readonly client: Redis | Cluster; readonly connectTimeoutMillis: number }, never, Scope.Scope> =>
  Effect.suspend(() => {
    const checked = check(options)
    if (Either.isLeft(checked)) {
      return Effect.die(new Cause.IllegalArgumentException(RedisMessages.invalidOptions(checked.left)))
    }
    if ("client" in options) {
      const client = options.client
      const offlineQueue = client instanceof Cluster
        ? client.options.enableOfflineQueue
        : client.options.enableOfflineQueue
      return Effect.as(
        offlineQueue !== false ? Effect.logWarning(RedisMessages.offlineQueueWarning) : Effect.void,
        { client, connectTimeoutMillis: RedisMessages.defaultConnectTimeoutMillis }
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

/** Where the connection goes, for its errors: a client's resolved options, or the Cluster nodes. */
const addressOf = (client: Redis | Cluster, options: Api.Options): () => string => {
  if (client instanceof Redis) {
    const at = RedisMessages.address({ _tag: "Node", node: client.options })
    return () => at
  }
  if ("cluster" in options) {
    const at = RedisMessages.address({ _tag: "Cluster", nodes: options.cluster })
    return () => at
  }
  // an application's Cluster: the nodes it knows now (its startup nodes are private to ioredis)
  return () => RedisMessages.address({ _tag: "Cluster", nodes: client.nodes("all").map((node) => node.options) })
}

/**
 * Keeps the client's last connection error (a refused or timed-out connect, a failed DNS lookup, a
 * refused password), so that a command refused for want of a connection says where and why.
 */
const followErrors = (
  client: Redis | Cluster,
  options: Api.Options
): Effect.Effect<{ readonly explain: (cause: unknown) => unknown }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const at = addressOf(client, options)
      let lastError: unknown
      let lastNodeError: unknown
      const remember = (error: unknown) => {
        lastError = RedisMessages.keptError(lastError, error)
      }
      // a Cluster reports a node's connection errors apart from its own
      const rememberNode = (error: unknown) => {
        lastNodeError = RedisMessages.keptError(lastNodeError, error)
      }
      client.on("error", remember)
      client.on("node error", rememberNode)
      const explain = (cause: unknown): unknown =>
        client.status !== "ready" && RedisMessages.isNoConnection(cause)
          ? new Error(
            RedisMessages.noConnection(
              client.status,
              at(),
              RedisMessages.connectionErrorText(lastError, lastNodeError)
            ),
            { cause }
          )
          : cause
      return { explain, remember, rememberNode }
    }),
    ({ remember, rememberNode }) =>
      Effect.sync(() => {
        client.off("error", remember)
        client.off("node error", rememberNode)
      })
  )

/** @internal */
export const make = (options: Api.Options): Effect.Effect<Api.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, connectTimeoutMillis } = yield* clientOf(options)
    const { explain } = yield* followErrors(client, options)

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
              slotsRefreshInterval: RedisMessages.subscriberSlotsRefreshMillis
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
        LimiterCommands.isNoScript(cause) ? client.eval(s.lua, keyCount, ...keysAndArgs) : Promise.reject(cause)
      )

    const runScript = (
      s: Api.Script,
      keys: ReadonlyArray<string>,
      args: ReadonlyArray<string>
    ): Effect.Effect<unknown, Api.RedisCommandError> =>
      Effect.async<unknown, Api.RedisCommandError>((resume) => {
        unsafeRunScript(s, keys.length, [...keys, ...args]).then(
          (reply) => resume(Effect.succeed(reply)),
          (cause) =>
            resume(Effect.fail(new Api.RedisCommandError({ command: `script ${s.name}`, cause: explain(cause) })))
        )
      })

    const loadScripts = (scripts: ReadonlyArray<Api.Script>): Effect.Effect<void, Api.RedisCommandError> =>
      Effect.forEach(
        client instanceof Cluster ? client.nodes("master") : [client],
        (node) =>
          Effect.forEach(scripts, (s) =>
            Effect.tryPromise({
              try: () => node.script("LOAD", s.lua),
              catch: (cause) => new Api.RedisCommandError({ command: `SCRIPT LOAD ${s.name}`, cause: explain(cause) })
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
      isReady: () => client.status === "ready",
      explain
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
