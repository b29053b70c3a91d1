/** @internal */
import * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { createHash } from "node:crypto"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"
import { type ScriptName, scripts } from "./scripts.js"

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
// options
// -----------------------------------------------------------------------------

/** @internal */
export const defaultUrl = "redis://127.0.0.1:6379"
/** @internal */
export const defaultPrefix = "sluice:rl:"
/** A take waits at most this long for Redis before the store-down policy answers instead. */
const defaultCommandTimeoutMillis = 500
const defaultConnectTimeoutMillis = 2000
/** Reconnection backoff: 100 ms more per attempt, capped so that recovery is noticed within 1 s. */
const maxReconnectDelayMillis = 1000
/**
 * On the client clock (tests under `TestClock`) the deciding clock and Redis' expiry clock run at
 * different speeds: virtual time jumps while real time crawls, and the other way round. A key
 * must not expire in real time while the virtual clock still needs it, so its TTL gets a minute
 * more than any contract test lasts.
 */
const clientClockTtlPadMillis = 60_000

interface Policy {
  readonly storeDown: RedisRateLimiterStore.StoreDownPolicy
  readonly localShare: number
}

interface Resolved {
  readonly url: string
  readonly prefix: string
  readonly defaultPolicy: Policy
  readonly policies: ReadonlyMap<string, Policy>
  readonly commandTimeoutMillis: number
  readonly connectTimeoutMillis: number
  readonly clock: "server" | "client"
  readonly redis: RedisRateLimiterStore.Options["redis"]
}

const policies: ReadonlyArray<RedisRateLimiterStore.StoreDownPolicy> = ["fail-closed", "fail-open", "local"]

const resolvePolicy = (
  at: string,
  storeDown: unknown,
  localShare: unknown
): Either.Either<Policy, string> => {
  const policy = storeDown ?? "fail-closed"
  if (typeof policy !== "string" || !policies.some((p) => p === policy)) {
    return Either.left(`${at}storeDown must be one of ${policies.join(", ")}, got ${JSON.stringify(policy)}`)
  }
  const known = policy as RedisRateLimiterStore.StoreDownPolicy
  if (localShare !== undefined && (typeof localShare !== "number" || !(localShare > 0 && localShare <= 1))) {
    return Either.left(`${at}localShare must be a number in (0, 1], got ${String(localShare)}`)
  }
  if (known === "local" && localShare === undefined) {
    return Either.left(
      `${at}localShare is required with storeDown "local": the share of each quota one process may use alone`
    )
  }
  return Either.right({ storeDown: known, localShare: typeof localShare === "number" ? localShare : 1 })
}

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
const checkUrl = (url: string, redacted: boolean): Either.Either<string, string> => {
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
  return Either.right(url)
}

/** @internal */
export const resolve = (options: RedisRateLimiterStore.Options): Either.Either<Resolved, string> => {
  const url = options.url === undefined
    ? defaultUrl
    : Redacted.isRedacted(options.url)
    ? Redacted.value(options.url)
    : options.url
  if (typeof url !== "string" || url.length === 0) return Either.left("url must be a non-empty string")
  const checkedUrl = checkUrl(url, Redacted.isRedacted(options.url))
  if (Either.isLeft(checkedUrl)) return Either.left(checkedUrl.left)
  const prefix = options.prefix ?? defaultPrefix
  if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
    return Either.left(`prefix must be a string without braces (they delimit the hash tag), got ${String(prefix)}`)
  }
  const defaultPolicy = resolvePolicy("", options.storeDown, options.localShare)
  if (Either.isLeft(defaultPolicy)) return Either.left(defaultPolicy.left)
  const byName = new Map<string, Policy>()
  for (const [name, policy] of Object.entries(options.limiters ?? {})) {
    const resolved = resolvePolicy(`limiters[${JSON.stringify(name)}].`, policy.storeDown, policy.localShare)
    if (Either.isLeft(resolved)) return Either.left(resolved.left)
    byName.set(name, resolved.right)
  }
  const commandTimeout = decodeMillis("commandTimeout", options.commandTimeout, defaultCommandTimeoutMillis)
  if (Either.isLeft(commandTimeout)) return Either.left(commandTimeout.left)
  const connectTimeout = decodeMillis("connectTimeout", options.connectTimeout, defaultConnectTimeoutMillis)
  if (Either.isLeft(connectTimeout)) return Either.left(connectTimeout.left)
  const clock = options.clock ?? "server"
  if (clock !== "server" && clock !== "client") {
    return Either.left(`clock must be "server" or "client", got ${JSON.stringify(clock)}`)
  }
  return Either.right({
    url,
    prefix,
    defaultPolicy: defaultPolicy.right,
    policies: byName,
    commandTimeoutMillis: commandTimeout.right,
    connectTimeoutMillis: connectTimeout.right,
    clock,
    redis: options.redis
  })
}

// -----------------------------------------------------------------------------
// keys and arguments
// -----------------------------------------------------------------------------

/**
 * The layout of the stored state (see `scripts.ts`), part of every key's name: a release that
 * stores another layout uses other keys, so no process ever reads state it would misread.
 */
const STATE_FORMAT = "v1"

const stateKeyOf = (prefix: string, key: string): string => `${prefix}{${key}}:${STATE_FORMAT}`

/** The key's cancelled runs (see `ledger.ts`), read and written by `refund` only. */
const runsKeyOf = (prefix: string, key: string): string => `${stateKeyOf(prefix, key)}:cancelled`

/**
 * The keys of one limiter: its state, then one log key per limit (used by sliding windows). They
 * share the hash tag `{key}`, so Redis Cluster puts them in one slot.
 *
 * @internal
 */
export const keysOf = (prefix: string, key: string, limits: number): Array<string> => {
  const state = stateKeyOf(prefix, key)
  const keys = [state]
  for (let i = 1; i <= limits; i++) keys.push(`${state}:log:${i}`)
  return keys
}

const algorithmCode = (algorithm: RateLimiterStore.Algorithm): string =>
  algorithm === "gcra" ? "g" : algorithm === "fixed-window" ? "f" : "s"

/**
 * A limiter's limits as its commands carry them, encoded once per array: a limiter passes the same
 * array with every take, so a take re-encodes nothing.
 */
interface Encoded {
  /** For `reserve` and `refund`: n, then per limit algorithm, limit, window, burst and signature. */
  readonly limitArgs: ReadonlyArray<string>
  /** Set when the limits are a single GCRA limit: `reserveGcra` decides then. */
  readonly gcra: GcraArgs | undefined
  /** The Redis keys of the last key used with these limits (a limiter always uses one key). */
  keys: { readonly key: string; readonly state: string; readonly all: ReadonlyArray<string> } | undefined
}

interface GcraArgs {
  readonly spec: RateLimiterStore.LimitSpec
  readonly signature: string
  /** The increments for `cost` (almost always 1, so computed once), as `reserveGcra` takes them. */
  cost: number
  slack: string
  advance: string
}

const fieldsOf = (spec: RateLimiterStore.LimitSpec): ReadonlyArray<string> => [
  algorithmCode(spec.algorithm),
  String(spec.limit),
  String(spec.windowMillis),
  String(spec.burst)
]

/** A limit as the state records it: a limit whose signature changed starts afresh. */
const signatureOf = (spec: RateLimiterStore.LimitSpec): string => fieldsOf(spec).join(":")

const encode = (limits: ReadonlyArray<RateLimiterStore.LimitSpec>): Encoded => {
  const limitArgs = [String(limits.length)]
  for (const spec of limits) limitArgs.push(...fieldsOf(spec), signatureOf(spec))
  const gcra: GcraArgs | undefined = limits.length === 1 && limits[0].algorithm === "gcra"
    ? { spec: limits[0], signature: signatureOf(limits[0]), cost: Number.NaN, slack: "", advance: "" }
    : undefined
  return { limitArgs, gcra, keys: undefined }
}

/**
 * GCRA's increments for `cost`, with `algorithm.ts`' own expressions, so that `reserveGcra` adds
 * the very doubles the memory store adds (`String` and Lua's `tonumber` round-trip a double
 * exactly).
 */
const gcraIncrements = (gcra: GcraArgs, cost: number): GcraArgs => {
  if (gcra.cost !== cost) {
    const interval = gcra.spec.windowMillis / gcra.spec.limit
    gcra.slack = String((cost - gcra.spec.burst) * interval)
    gcra.advance = String(cost * interval)
    gcra.cost = cost
  }
  return gcra
}

const maxWaitArgument = (millis: number): string => millis === Number.POSITIVE_INFINITY ? "-1" : String(millis)

/** Scales a quota to the share one process may use alone while Redis is down. */
const scaleLimits = (
  limits: ReadonlyArray<RateLimiterStore.LimitSpec>,
  share: number
): ReadonlyArray<RateLimiterStore.LimitSpec> =>
  share === 1 ? limits : limits.map((spec) => {
    const limit = Math.max(1, Math.floor(spec.limit * share))
    const burst = spec.algorithm === "gcra" ? Math.min(limit, Math.max(1, Math.floor(spec.burst * share))) : limit
    return { ...spec, limit, burst }
  })

const errorText = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

const isNoScript = (cause: unknown): boolean => errorText(cause).startsWith("NOSCRIPT")

const nowArgument = (clock: Clock.Clock): string => String(Number(clock.unsafeCurrentTimeNanos()) / 1_000_000)

// -----------------------------------------------------------------------------
// replies
// -----------------------------------------------------------------------------

/** What a decoder answers for a reply it does not recognise. */
const invalid: unique symbol = Symbol("invalid reply")

type Decoder<A> = (reply: unknown) => A | typeof invalid

const decodeReserve: Decoder<RateLimiterStore.ReserveResult> = (reply) => {
  // the common answer: a start that may happen at once (so not paused), as its bare reservation id
  if (typeof reply === "number") return { _tag: "Reserved", delayMillis: 0, reservation: reply }
  if (Array.isArray(reply)) {
    if (reply[0] === "R") {
      return {
        _tag: "Reserved",
        delayMillis: Number(reply[1]),
        reservation: Number(reply[2]),
        pausedMillis: Number(reply[3]),
        // the start, then each limit's restore point: what an exact refund needs
        restore: reply.length > 4 ? reply.slice(4).map(Number) : undefined
      }
    }
    if (reply[0] === "X") {
      return {
        _tag: "Refused",
        delayMillis: Number(reply[1]),
        retryAfterMillis: Number(reply[2]),
        binding: Number(reply[3])
      }
    }
  }
  return invalid
}

const decodeRefund: Decoder<boolean> = (reply) => reply === 1 ? true : reply === 0 ? false : invalid

const decodeVoid: Decoder<void> = () => undefined

const decodePause: Decoder<number> = (reply) => {
  const millis = Number(reply)
  return Number.isFinite(millis) ? millis : invalid
}

// -----------------------------------------------------------------------------
// the store
// -----------------------------------------------------------------------------

interface Script {
  readonly name: ScriptName
  readonly lua: string
  readonly sha: string
}

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

    const encodings = new WeakMap<ReadonlyArray<RateLimiterStore.LimitSpec>, Encoded>()
    const encoded = (limits: ReadonlyArray<RateLimiterStore.LimitSpec>): Encoded => {
      let found = encodings.get(limits)
      if (found === undefined) {
        found = encode(limits)
        encodings.set(limits, found)
      }
      return found
    }
    const keysFor = (encoding: Encoded, key: string, limits: number) => {
      let keys = encoding.keys
      if (keys === undefined || keys.key !== key) {
        const all = keysOf(prefix, key, limits)
        keys = { key, state: all[0], all }
        encoding.keys = keys
      }
      return keys
    }

    const policyOf = (key: string): Policy => settings.policies.get(key) ?? settings.defaultPolicy

    const failClosed = (key: string, error: RateLimiterStore.RateLimiterStoreError) =>
      Effect.fail(
        new RateLimiterStore.RateLimiterStoreError({
          message: `${error.message} (limiter "${key}" fails closed while Redis is unreachable)`,
          cause: error.cause
        })
      )

    const reserveDown = (
      request: RateLimiterStore.ReserveRequest,
      error: RateLimiterStore.RateLimiterStoreError
    ): Effect.Effect<RateLimiterStore.ReserveResult, RateLimiterStore.RateLimiterStoreError> => {
      const policy = policyOf(request.key)
      switch (policy.storeDown) {
        case "fail-closed":
          return failClosed(request.key, error)
        case "fail-open":
          // Unlimited, except for a pause this process learned: a known cooldown is still honoured.
          return Effect.map(
            local.readPause(request.key),
            (pause): RateLimiterStore.ReserveResult =>
              pause > request.maxWaitMillis
                ? { _tag: "Refused", delayMillis: pause, retryAfterMillis: pause - request.maxWaitMillis, binding: -1 }
                : { _tag: "Reserved", delayMillis: pause, reservation: 0, pausedMillis: pause, unlimited: true }
          )
        case "local":
          // Local reservations get negative ids, so that their refunds go back to the local store.
          return Effect.map(
            local.reserve({ ...request, limits: scaleLimits(request.limits, policy.localShare) }),
            (result) => result._tag === "Reserved" ? { ...result, reservation: -result.reservation } : result
          )
      }
    }

    const reserve = (
      request: RateLimiterStore.ReserveRequest
    ): Effect.Effect<RateLimiterStore.ReserveResult, RateLimiterStore.RateLimiterStoreError> => {
      const encoding = encoded(request.limits)
      const keys = keysFor(encoding, request.key, request.limits.length)
      const maxWait = maxWaitArgument(request.maxWaitMillis)
      const down = (error: RateLimiterStore.RateLimiterStoreError) => reserveDown(request, error)
      const gcra = encoding.gcra
      if (gcra !== undefined) {
        const { advance, signature, slack } = gcraIncrements(gcra, request.cost)
        return withNow((now) =>
          runScript(
            "reserve",
            request.key,
            loaded.reserveGcra,
            1,
            [
              keys.state,
              now,
              ttlPad,
              maxWait,
              signature,
              slack,
              advance
            ],
            decodeReserve,
            down
          )
        )
      }
      return withNow((now) =>
        runScript(
          "reserve",
          request.key,
          loaded.reserve,
          keys.all.length,
          [
            ...keys.all,
            now,
            ttlPad,
            String(request.cost),
            maxWait,
            ...encoding.limitArgs
          ],
          decodeReserve,
          down
        )
      )
    }

    const refund = (
      request: RateLimiterStore.RefundRequest
    ): Effect.Effect<boolean, RateLimiterStore.RateLimiterStoreError> => {
      if (request.reservation < 0) {
        const share = policyOf(request.key).localShare
        return local.refund({
          ...request,
          limits: scaleLimits(request.limits, share),
          reservation: -request.reservation
        })
      }
      if (request.reservation === 0) return Effect.succeed(false)
      const encoding = encoded(request.limits)
      const keys = keysFor(encoding, request.key, request.limits.length)
      return withNow((now) =>
        runScript(
          "refund",
          request.key,
          loaded.refund,
          keys.all.length + 1,
          [
            ...keys.all,
            runsKeyOf(prefix, request.key),
            now,
            ttlPad,
            String(request.cost),
            String(request.reservation),
            ...encoding.limitArgs,
            ...(request.restore ?? []).map(String)
          ],
          decodeRefund,
          (error) =>
            policyOf(request.key).storeDown === "fail-closed" ? failClosed(request.key, error) : Effect.succeed(false)
        )
      )
    }

    const service: RateLimiterStore.Service = {
      reserve,
      refund,
      pause: (key, millis) =>
        // Kept locally as well: when Redis goes down, this process still honours what it learned.
        Effect.zipRight(
          local.pause(key, millis),
          withNow((now) =>
            runScript(
              "pause",
              key,
              loaded.pause,
              1,
              [stateKeyOf(prefix, key), now, ttlPad, String(millis)],
              decodeVoid,
              (error) => policyOf(key).storeDown === "fail-closed" ? failClosed(key, error) : Effect.void
            )
          )
        ),
      readPause: (key) =>
        withNow((now) =>
          runScript(
            "readPause",
            key,
            loaded.readPause,
            1,
            [stateKeyOf(prefix, key), now, ttlPad],
            decodePause,
            (error) => policyOf(key).storeDown === "fail-closed" ? failClosed(key, error) : local.readPause(key)
          )
        )
    }

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

/** @internal */
export const config: Config.Config<RedisRateLimiterStore.Options> = Config.all({
  url: Config.option(Config.redacted("URL")),
  prefix: Config.option(Config.string("PREFIX")),
  storeDown: Config.option(Config.literal("fail-closed", "fail-open", "local")("STORE_DOWN")),
  localShare: Config.option(Config.number("LOCAL_SHARE")),
  // read as text: `Config.duration` reads "-5 seconds" as zero
  commandTimeout: Config.option(Config.string("COMMAND_TIMEOUT"))
}).pipe(
  Config.mapOrFail((input) => {
    // LOCAL_SHARE means something only with STORE_DOWN=local: alone, the policy key is missing
    // or misspelt, and the fallback it meant would silently be fail-closed
    if (Option.isSome(input.localShare) && Option.getOrUndefined(input.storeDown) !== "local") {
      return Either.left(
        ConfigError.InvalidData(
          ["STORE_DOWN"],
          `must be "local" when LOCAL_SHARE is set, got ${
            Option.match(input.storeDown, { onNone: () => "nothing", onSome: (policy) => JSON.stringify(policy) })
          }`
        )
      )
    }
    const commandTimeout = Option.match(input.commandTimeout, {
      onNone: () => Either.right(undefined),
      onSome: (text) => Either.map(decodeMillis("COMMAND_TIMEOUT", text, 0), Duration.millis)
    })
    if (Either.isLeft(commandTimeout)) {
      return Either.left(ConfigError.InvalidData(["COMMAND_TIMEOUT"], commandTimeout.left))
    }
    const options: RedisRateLimiterStore.Options = {
      url: Option.getOrUndefined(input.url),
      prefix: Option.getOrUndefined(input.prefix),
      storeDown: Option.getOrElse(input.storeDown, () => "fail-closed" as const),
      localShare: Option.getOrUndefined(input.localShare),
      commandTimeout: commandTimeout.right
    }
    const resolved = resolve(options)
    return Either.isLeft(resolved)
      ? Either.left(ConfigError.InvalidData([], `invalid Redis rate limiter store settings: ${resolved.left}`))
      : Either.right(options)
  })
)
