/** @internal */
import { invalid, writeBatcher } from "@sluice/core/LimiterCommands"
import * as LimiterOperations from "@sluice/core/LimiterOperations"
import { type ScriptName, scripts } from "@sluice/core/LimiterScripts"
import * as LimiterStoreMessages from "@sluice/core/LimiterStoreMessages"
import * as RedisMessages from "@sluice/core/RedisMessages"
import * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import * as RedisConnection from "@sluice/redis/RedisConnection"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import type * as Scope from "effect/Scope"
import { type Cluster, Redis } from "ioredis"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"
import { nowArgument, nowMillis } from "./commands.js"
import { clientClockTtlPadMillis, resolve, type Resolved, resolveStore } from "./settings.js"

/** @internal */
export { keysOf } from "@sluice/core/LimiterCommands"

/** @internal */
export { config } from "./settings.js"

// -----------------------------------------------------------------------------
// metrics
// -----------------------------------------------------------------------------

/** @internal */
export const degradedGauge = Metric.gauge("sluice_limiter_store_degraded", {
  description: "1 while the Redis rate limiter store cannot reach Redis and limiters apply their store-down policy"
})

/** @internal */
export const errorsTotal = Metric.counter("sluice_limiter_store_errors_total", {
  description: "Redis rate limiter store commands that failed (unreachable, timed out, refused)",
  incremental: true
})

// -----------------------------------------------------------------------------
// the store
// -----------------------------------------------------------------------------

const loadScripts = (): { readonly [Name in ScriptName]: RedisConnection.Script } => {
  const make = (name: ScriptName): RedisConnection.Script => RedisConnection.script(name, scripts[name])
  return {
    reserveGcra: make("reserveGcra"),
    reserve: make("reserve"),
    refund: make("refund"),
    settle: make("settle"),
    tighten: make("tighten"),
    pause: make("pause"),
    readPause: make("readPause")
  }
}

/**
 * Batches the commands of one tick into a few socket writes (`@sluice/core/LimiterCommands`'
 * `writeBatcher`). ioredis' auto-pipelining batches too, but costs a pipeline, an extra promise
 * and a `nextTick` per command, and holds a batch back until the previous one's replies are in.
 * Kept over plain sends because a take costs less CPU, client and Redis, with it (bench redis,
 * "corked writes").
 */
const batcherOf = (client: Redis | Cluster): () => void =>
  writeBatcher(client instanceof Redis ? client : undefined, process.nextTick)

/** @internal */
export const make = (
  options: RedisRateLimiterStore.Options
): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> =>
  Effect.suspend(() => {
    const resolved = resolve(options)
    return Either.isLeft(resolved)
      ? Effect.die(new Cause.IllegalArgumentException(resolved.left))
      : Effect.flatMap(
        RedisConnection.make(resolved.right.connection),
        (connection) => makeWith(resolved.right.store, connection)
      )
  })

/** @internal */
export const makeFromConnection = (
  options: RedisRateLimiterStore.StoreOptions
): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope | RedisConnection.RedisConnection> =>
  Effect.suspend(() => {
    const resolved = resolveStore(options)
    return Either.isLeft(resolved)
      ? Effect.die(new Cause.IllegalArgumentException(resolved.left))
      : Effect.flatMap(RedisConnection.RedisConnection, (connection) => makeWith(resolved.right, connection))
  })

const makeWith = (
  settings: Resolved,
  connection: RedisConnection.Service
): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { prefix } = settings
    const labels = [MetricLabel.make("prefix", prefix)]
    const ttlPad = String(settings.clock === "client" ? clientClockTtlPadMillis : 0)
    // the clock the limiters whose policy is `local` decide on while Redis is down
    const storeClock = yield* Effect.clock
    const redis = connection.client
    const loaded = loadScripts()

    const storeError = (operation: string, key: string, failure: unknown) => {
      const cause = connection.explain(failure)
      return new RateLimiterStore.RateLimiterStoreError({
        message: LimiterStoreMessages.commandFailed(prefix, operation, key, cause),
        cause
      })
    }

    // -------------------------------------------------------------------------
    // degraded mode
    // -------------------------------------------------------------------------

    let degraded = false
    let lastError: RateLimiterStore.RateLimiterStoreError | undefined

    const wentDown = (error: RateLimiterStore.RateLimiterStoreError): Effect.Effect<void> =>
      Effect.suspend(() => {
        errorsTotal.unsafeUpdate(1, labels)
        lastError = error
        if (degraded) return Effect.void
        degraded = true
        degradedGauge.unsafeUpdate(1, labels)
        return Effect.logWarning(LimiterStoreMessages.degraded(prefix, error.cause))
      })

    const cameBack: Effect.Effect<void> = Effect.suspend(() => {
      if (!degraded) return Effect.void
      degraded = false
      lastError = undefined
      degradedGauge.unsafeUpdate(0, labels)
      return Effect.logInfo(LimiterStoreMessages.recovered(prefix))
    })

    const batchWrites = batcherOf(redis)

    /** What the key's store-down policy answers for `call` when Redis failed with `error`. */
    const fallback = <A>(
      call: LimiterOperations.Call<A>,
      error: RateLimiterStore.RateLimiterStoreError
    ): Effect.Effect<A, RateLimiterStore.RateLimiterStoreError> =>
      Effect.suspend(() => {
        const down = call.down(error.message)
        return down._tag === "Answer"
          ? Effect.succeed(down.value)
          : Effect.fail(new RateLimiterStore.RateLimiterStoreError({ message: down.message, cause: error.cause }))
      })

    /**
     * Runs one script in one round trip and answers its decoded reply, or `fallback`'s answer when
     * Redis fails (the store then reports itself degraded). While degraded and disconnected, Redis
     * is not even asked (the command would fail at once anyway); the first command that succeeds
     * after ioredis reconnects ends the degraded mode. After a Redis restart, a failover (or
     * `SCRIPT FLUSH`) the connection sends the text once with `EVAL`: `NOSCRIPT` means it never ran.
     *
     * This is a take's whole client side, so it is one `Effect.async` around ioredis' promise:
     * the retry and the fallback are decided in the promise's callbacks, where layering
     * `tryPromise`, `catchIf` and `matchEffect` cost several effects per take.
     */
    const runScript = <A>(
      call: LimiterOperations.Call<A>,
      now: string
    ): Effect.Effect<A, RateLimiterStore.RateLimiterStoreError> =>
      Effect.async((resume) => {
        call.first?.()
        if (degraded && !connection.isReady()) {
          errorsTotal.unsafeUpdate(1, labels)
          const cause = lastError?.cause ?? new Error(`connection ${redis.status}`)
          resume(fallback(call, storeError(call.operation, call.key, cause)))
          return
        }
        const fail = (cause: unknown) => {
          const error = storeError(call.operation, call.key, cause)
          resume(Effect.zipRight(wentDown(error), fallback(call, error)))
        }
        const succeed = (reply: unknown) => {
          const decoded = call.decode(reply)
          if (decoded === invalid) fail(new Error(`unexpected reply ${JSON.stringify(reply)}`))
          else resume(degraded ? Effect.as(cameBack, decoded) : Effect.succeed(decoded))
        }
        batchWrites()
        connection.unsafeRunScript(loaded[call.script], call.keyCount, call.args(now)).then(succeed, fail)
      })

    /**
     * Runs a step of `@sluice/core/LimiterOperations`. A script's ARGV head is the deciding
     * instant (empty: the server's `TIME`): on the server's clock the command is built at once;
     * only the client clock needs the fiber's `Clock`.
     */
    const run = <A>(step: LimiterOperations.Step<A>): Effect.Effect<A, RateLimiterStore.RateLimiterStoreError> => {
      const effect = step._tag === "Local"
        ? Effect.sync(step.run)
        : settings.clock === "server"
        ? runScript(step, "")
        : Effect.clockWith((clock) => runScript(step, nowArgument(clock)))
      return step.warning === undefined ? effect : Effect.zipRight(Effect.logWarning(step.warning), effect)
    }

    const operations = LimiterOperations.make(settings, ttlPad, () => nowMillis(storeClock))
    const service: RateLimiterStore.Service = {
      reserve: (request) => run(operations.reserve(request)),
      refund: (request) => run(operations.refund(request)),
      settle: (request) => run(operations.settle(request)),
      tighten: (request) => run(operations.tighten(request, RateLimiterStore.usableObservations(request))),
      pause: (key, millis) => run(operations.pause(key, millis)),
      readPause: (key) => run(operations.readPause(key))
    }

    degradedGauge.unsafeUpdate(0, labels)
    // the connection waited (up to its connectTimeout) for Redis when it was opened
    if (connection.isReady()) {
      yield* Effect.ignore(connection.loadScripts(Object.values(loaded)))
    } else {
      yield* wentDown(storeError("connect", "*", new Error(RedisMessages.noConnection(redis.status))))
    }
    return service
  })

// -----------------------------------------------------------------------------
// layers and config
// -----------------------------------------------------------------------------

/** @internal */
export const layer = (options: RedisRateLimiterStore.Options): Layer.Layer<RateLimiterStore.RateLimiterStore> =>
  Layer.scoped(RateLimiterStore.RateLimiterStore, make(options))

/** @internal */
export const layerFromConnection = (
  options: RedisRateLimiterStore.StoreOptions
): Layer.Layer<RateLimiterStore.RateLimiterStore, never, RedisConnection.RedisConnection> =>
  Layer.scoped(RateLimiterStore.RateLimiterStore, makeFromConnection(options))

/** @internal */
export const layerConfig = (
  config: Config.Config<RedisRateLimiterStore.Options>
): Layer.Layer<RateLimiterStore.RateLimiterStore, ConfigError.ConfigError> =>
  Layer.scoped(RateLimiterStore.RateLimiterStore, Effect.flatMap(config, make))
