/** @internal */
import * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { createHash } from "node:crypto"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"
import { type Decoder, errorText, invalid, isNoScript, nowArgument } from "./commands.js"
import { operations, type Script } from "./operations.js"
import { type ScriptName, scripts } from "./scripts.js"
import { clientClockTtlPadMillis, maxReconnectDelayMillis, resolve, type Resolved } from "./settings.js"

/** @internal */
export { keysOf } from "./commands.js"

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

const loadScripts = (): { readonly [Name in ScriptName]: Script } => {
  const make = (name: ScriptName): Script => ({
    name,
    lua: scripts[name],
    sha: createHash("sha1").update(scripts[name]).digest("hex")
  })
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

const connect = (settings: Resolved): Effect.Effect<Redis, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const redis = new Redis(settings.url, {
        retryStrategy: (times) => Math.min(times * 100, maxReconnectDelayMillis),
        connectTimeout: settings.connectTimeoutMillis,
        // The store batches its writes itself (see `writeBatcher`), which ioredis' auto-pipelining
        // would only slow down.
        enableAutoPipelining: false,
        ...settings.redis,
        // What keeps a take from hanging while Redis is down: fail at once when disconnected, give
        // up on a command after the timeout, never resend a decision (it may have been made).
        enableOfflineQueue: false,
        commandTimeout: settings.commandTimeoutMillis,
        maxRetriesPerRequest: 0
      })
      // Failures reach the caller through the commands; without a listener ioredis prints each one.
      redis.on("error", () => {})
      return redis
    }),
    (redis) =>
      Effect.zipRight(
        redis.status === "ready"
          ? Effect.ignore(Effect.tryPromise({ try: () => redis.quit(), catch: (cause) => cause }))
          : Effect.void,
        Effect.sync(() => redis.disconnect())
      )
  )

/**
 * Batches the commands sent in one tick into a few socket writes: the first command of a tick
 * corks the socket, every `WRITE_GROUP` commands it is flushed and corked again, and the end of
 * the tick flushes the rest. Each is still one command, one reply and one round trip. A busy
 * process's takes come in bursts (the replies read in one go resume fibers that send their next
 * takes), and on loopback one write system call costs about as much as the rest of a take's
 * client side: batching saves it, and a read in Redis. Flushing in groups rather than once per
 * tick lets Redis start on the first commands while the client is still resuming fibers and
 * writing the next ones; with one write per tick the two took turns.
 *
 * ioredis' auto-pipelining batches too, but costs a pipeline, an extra promise and a `nextTick`
 * per command, and holds a batch back until the previous one's replies are in: with 64 takes in
 * flight, a take cost 1.5x the client CPU it costs with this.
 */
const writeBatcher = (redis: Redis): () => void => {
  let corked: Redis["stream"] | undefined
  let written = 0
  const uncork = () => {
    const stream = corked
    corked = undefined
    written = 0
    stream?.uncork()
  }
  return () => {
    // not connected: the command fails at once anyway (no offline queue)
    if (redis.status !== "ready") return
    if (corked !== undefined) {
      if (++written >= WRITE_GROUP) {
        corked.uncork()
        corked.cork()
        written = 0
      }
      return
    }
    corked = redis.stream
    corked.cork()
    // after every fiber resumed in this tick has had its turn (Effect resumes fibers on microtasks)
    process.nextTick(uncork)
  }
}

/**
 * Commands per socket write within a tick: 16 was the fastest group size measured with 64 takes in
 * flight (`pnpm bench redis`; figures in docs/guides/comparison.md).
 */
const WRITE_GROUP = 16

/** Waits (bounded) for the first connection, so that the first take does not find it still opening. */
const awaitReady = (redis: Redis, millis: number): Effect.Effect<boolean> =>
  redis.status === "ready" ? Effect.succeed(true) : Effect.async<boolean>((resume) => {
    const onReady = () => resume(Effect.succeed(true))
    redis.once("ready", onReady)
    return Effect.sync(() => {
      redis.off("ready", onReady)
    })
  }).pipe(Effect.timeoutTo({ duration: Duration.millis(millis), onSuccess: (ready) => ready, onTimeout: () => false }))

/** @internal */
export const make = (
  options: RedisRateLimiterStore.Options
): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> =>
  Effect.suspend(() => {
    const resolved = resolve(options)
    return Either.isLeft(resolved)
      ? Effect.die(new Cause.IllegalArgumentException(`Redis rate limiter store: ${resolved.left}`))
      : makeWith(resolved.right)
  })

const makeWith = (settings: Resolved): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { prefix } = settings
    const labels = [MetricLabel.make("prefix", prefix)]
    const ttlPad = String(settings.clock === "client" ? clientClockTtlPadMillis : 0)
    const local = yield* RateLimiterStore.makeMemory
    const redis = yield* connect(settings)
    const loaded = loadScripts()

    const storeError = (operation: string, key: string, cause: unknown) =>
      new RateLimiterStore.RateLimiterStoreError({
        message: `Redis rate limiter store "${prefix}": ${operation} of "${key}" failed: ${errorText(cause)}`,
        cause
      })

    const load = (script: Script, key: string) =>
      Effect.tryPromise({
        try: () => redis.script("LOAD", script.lua),
        catch: (cause) => storeError(`SCRIPT LOAD ${script.name}`, key, cause)
      })

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
        return Effect.logWarning(
          `Redis rate limiter store "${prefix}" is degraded (${
            errorText(error.cause)
          }): each limiter applies its store-down policy until Redis answers again`
        )
      })

    const cameBack: Effect.Effect<void> = Effect.suspend(() => {
      if (!degraded) return Effect.void
      degraded = false
      lastError = undefined
      degradedGauge.unsafeUpdate(0, labels)
      return Effect.logInfo(`Redis rate limiter store "${prefix}" recovered: decisions are shared again`)
    })

    const batchWrites = writeBatcher(redis)

    /**
     * Runs one script in one round trip and answers its decoded reply, or `fallback`'s answer when
     * Redis fails (the store then reports itself degraded). While degraded and disconnected, Redis
     * is not even asked (the command would fail at once anyway); the first command that succeeds
     * after ioredis reconnects ends the degraded mode. After a Redis restart (or `SCRIPT FLUSH`)
     * the script is loaded again and the call repeated, once: `NOSCRIPT` means it never ran.
     *
     * This is a take's whole client side, so it is one `Effect.async` around ioredis' promise:
     * the retry and the fallback are decided in the promise's callbacks, where layering
     * `tryPromise`, `catchIf` and `matchEffect` cost several effects per take.
     */
    const runScript = <A>(
      operation: string,
      key: string,
      script: Script,
      keyCount: number,
      args: ReadonlyArray<string>,
      decode: Decoder<A>,
      fallback: (
        error: RateLimiterStore.RateLimiterStoreError
      ) => Effect.Effect<A, RateLimiterStore.RateLimiterStoreError>
    ): Effect.Effect<A, RateLimiterStore.RateLimiterStoreError> =>
      Effect.async<A, RateLimiterStore.RateLimiterStoreError>((resume) => {
        if (degraded && redis.status !== "ready") {
          errorsTotal.unsafeUpdate(1, labels)
          resume(fallback(storeError(operation, key, lastError?.cause ?? new Error(`connection ${redis.status}`))))
          return
        }
        const fail = (cause: unknown) => {
          const error = storeError(operation, key, cause)
          resume(Effect.zipRight(wentDown(error), fallback(error)))
        }
        const succeed = (reply: unknown) => {
          const decoded = decode(reply)
          if (decoded === invalid) fail(new Error(`unexpected reply ${JSON.stringify(reply)}`))
          else resume(degraded ? Effect.as(cameBack, decoded) : Effect.succeed(decoded))
        }
        const send = () => {
          batchWrites()
          return redis.evalsha(script.sha, keyCount, ...args)
        }
        send().then(succeed, (cause) => {
          if (!isNoScript(cause)) return fail(cause)
          redis.script("LOAD", script.lua).then(send).then(succeed, fail)
        })
      })

    /**
     * The script's ARGV head: the deciding instant (empty: the server's `TIME`). On the server's
     * clock the command is built at once; only the client clock needs the fiber's `Clock`.
     */
    const withNow = <A, E>(f: (now: string) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
      settings.clock === "server" ? f("") : Effect.clockWith((clock) => f(nowArgument(clock)))

    const service = operations({ prefix, settings, ttlPad, local, scripts: loaded, runScript, withNow })

    degradedGauge.unsafeUpdate(0, labels)
    if (yield* awaitReady(redis, settings.connectTimeoutMillis)) {
      yield* Effect.forEach(Object.values(loaded), (script) => Effect.ignore(load(script, "*")), { discard: true })
    } else {
      yield* wentDown(
        storeError("connect", "*", new Error(`no connection to Redis within ${settings.connectTimeoutMillis}ms`))
      )
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
export const layerConfig = (
  config: Config.Config<RedisRateLimiterStore.Options>
): Layer.Layer<RateLimiterStore.RateLimiterStore, ConfigError.ConfigError> =>
  Layer.scoped(RateLimiterStore.RateLimiterStore, Effect.flatMap(config, make))
