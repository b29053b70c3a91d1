/** @internal */
import * as Arr from "effect/Array"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as RateLimiter from "../RateLimiter.js"
import * as RateLimiterStore from "../RateLimiterStore.js"
import * as algorithm from "./algorithm.js"
import * as errors from "./errors.js"
import { Heap } from "./heap.js"
import { nowMillis } from "./memoryStore.js"

/** @internal */
export const TypeId: RateLimiter.TypeId = Symbol.for("@sluice/rate-limiter/RateLimiter") as RateLimiter.TypeId

/** @internal */
export const isRateLimiter = (u: unknown): u is RateLimiter.RateLimiter => Predicate.hasProperty(u, TypeId)

// -----------------------------------------------------------------------------
// metrics
// -----------------------------------------------------------------------------

/** From 0.5 ms doubling to ~4.4 min: a paced start waits milliseconds, a daily quota hours. */
const waitSeconds = Metric.histogram(
  "sluice_limiter_wait_seconds",
  MetricBoundaries.exponential({ start: 0.0005, factor: 2, count: 20 }),
  "Time from take to start, in seconds, per rate limiter"
)

const rejectedTotal = Metric.counter("sluice_limiter_rejected_total", {
  description: "Takes refused because the start would come later than maxWait, by limiter and reason",
  incremental: true
})

/** From 0.1 ms doubling to ~3.3 s: how late the dispatcher's timer fired. */
const timerLatenessSeconds = Metric.histogram(
  "sluice_limiter_timer_lateness_seconds",
  MetricBoundaries.exponential({ start: 0.0001, factor: 2, count: 16 }),
  "How late each rate limiter dispatcher timer fired, in seconds"
)

// -----------------------------------------------------------------------------
// validation
// -----------------------------------------------------------------------------

const algorithms: ReadonlyArray<RateLimiterStore.Algorithm> = ["gcra", "fixed-window", "sliding-window"]

const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "bigint" || typeof u === "boolean" || u === undefined) return String(u)
  if (Duration.isDuration(u)) return Duration.format(u)
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

const isPositiveInteger = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 1

/** A duration from user input, or why it is not one. NaN and negatives are refused, not read as zero. */
const decodeDuration = (
  label: string,
  input: unknown,
  options: { readonly allowZero: boolean; readonly allowInfinite: boolean }
): Either.Either<number, string> => {
  if (typeof input === "number" && Number.isNaN(input)) return Either.left(`${label} must be a duration, got NaN`)
  // Duration reads a negative number as zero; a negative input is a mistake worth naming.
  if ((typeof input === "number" || typeof input === "bigint") && input < 0) {
    return Either.left(`${label} must be ${options.allowZero ? "≥ 0" : "> 0"}, got ${show(input)}`)
  }
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(`${label} must be a duration, got ${show(input)}`)
  const millis = Duration.toMillis(decoded.value)
  if (Number.isNaN(millis)) return Either.left(`${label} must be a duration, got NaN`)
  if (millis < 0 || (millis === 0 && !options.allowZero)) {
    return Either.left(`${label} must be ${options.allowZero ? "≥ 0" : "> 0"}, got ${show(input)}`)
  }
  if (!Number.isFinite(millis) && !options.allowInfinite) return Either.left(`${label} must be finite, got infinity`)
  return Either.right(millis)
}

/** @internal */
export interface Resolved {
  readonly limits: NonEmptyReadonlyArray<RateLimiter.ResolvedLimit>
  readonly specs: ReadonlyArray<RateLimiterStore.LimitSpec>
  readonly maxWaitMillis: number
  /** The largest cost every limit can hold. */
  readonly maxCost: number
}

const resolveLimit = (input: RateLimiter.Limit, at: string): Either.Either<RateLimiter.ResolvedLimit, string> => {
  if (!isPositiveInteger(input.limit)) return Either.left(`${at}limit must be an integer ≥ 1, got ${show(input.limit)}`)
  const algorithm = input.algorithm ?? "gcra"
  if (!algorithms.includes(algorithm)) {
    return Either.left(`${at}algorithm must be one of ${algorithms.join(", ")}, got ${show(algorithm)}`)
  }
  const window = decodeDuration(`${at}window`, input.window, { allowZero: false, allowInfinite: false })
  if (Either.isLeft(window)) return Either.left(window.left)
  let burst = 1
  if (algorithm === "gcra") {
    if (input.burst !== undefined && !isPositiveInteger(input.burst)) {
      return Either.left(`${at}burst must be an integer ≥ 1, got ${show(input.burst)}`)
    }
    burst = input.burst ?? 1
  } else {
    if (input.burst !== undefined) {
      return Either.left(
        `${at}burst applies to gcra only; a ${algorithm} admits its whole limit at once (add a gcra limit to space starts)`
      )
    }
    burst = input.limit
  }
  return Either.right({ limit: input.limit, window: Duration.millis(window.right), algorithm, burst })
}

/**
 * Checks the settings of a limiter; the error is a sentence without the limiter's name.
 *
 * @internal
 */
export const resolve = (settings: RateLimiter.Settings): Either.Either<Resolved, string> => {
  const inputs: ReadonlyArray<RateLimiter.Limit> = settings.limits !== undefined ? settings.limits : [settings]
  if (settings.limits !== undefined && (settings.limit !== undefined || settings.window !== undefined)) {
    return Either.left("give either limit and window or limits, not both")
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return Either.left("limits must hold at least one limit")
  const resolvedLimits: Array<RateLimiter.ResolvedLimit> = []
  for (let i = 0; i < inputs.length; i++) {
    const resolved = resolveLimit(inputs[i], inputs.length > 1 ? `limits[${i}].` : "")
    if (Either.isLeft(resolved)) return Either.left(resolved.left)
    resolvedLimits.push(resolved.right)
  }
  if (!Arr.isNonEmptyReadonlyArray(resolvedLimits)) return Either.left("limits must hold at least one limit")
  const limits = resolvedLimits
  let maxWaitMillis = Number.POSITIVE_INFINITY
  if (settings.maxWait !== undefined) {
    const decoded = decodeDuration("maxWait", settings.maxWait, { allowZero: true, allowInfinite: true })
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    maxWaitMillis = decoded.right
  }
  const specs = limits.map((limit): RateLimiterStore.LimitSpec => ({
    algorithm: limit.algorithm,
    limit: limit.limit,
    windowMillis: Duration.toMillis(limit.window),
    burst: limit.burst
  }))
  const maxCost = Math.min(...specs.map(algorithm.capacity))
  return Either.right({ limits, specs, maxWaitMillis, maxCost })
}

const illegal = (name: string, message: string) =>
  Effect.die(new Cause.IllegalArgumentException(`rate limiter ${show(name)}: ${message}`))

// -----------------------------------------------------------------------------
// the limiter
// -----------------------------------------------------------------------------

const QUEUED = 0
const RELEASED = 1
const CANCELLED = 2

interface Waiter {
  readonly target: number
  /** Arrival order, to break ties between equal targets. */
  readonly order: number
  readonly cost: number
  readonly reservation: number
  state: typeof QUEUED | typeof RELEASED | typeof CANCELLED
  /** When the dispatcher let it start. */
  startedAt: number
  resume: ((effect: Effect.Effect<void>) => void) | undefined
}

const before = (a: Waiter, b: Waiter): boolean => a.target < b.target || (a.target === b.target && a.order < b.order)

const makeWith = (
  name: string,
  resolved: Resolved,
  store: RateLimiterStore.Service
): Effect.Effect<RateLimiter.RateLimiter, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock: Clock.Clock = yield* Effect.clock
    const { limits, maxCost, specs } = resolved
    const key = name
    const labels = [MetricLabel.make("name", name)]
    const quotaLabels = [...labels, MetricLabel.make("reason", "quota")]
    const pausedLabels = [...labels, MetricLabel.make("reason", "paused")]
    const defaultMaxWait = Duration.millis(resolved.maxWaitMillis)

    // The local pacer: the same limits, applied to the actual starts of this process. Reservations
    // already obey them, so with a punctual clock it never delays anyone (exact starts under
    // TestClock); when timers fire late it keeps the late sleepers from starting in a bunch.
    const pacer = specs.map(algorithm.initialState)
    const sleepers = new Heap<Waiter>(before)
    let queued = 0
    let arrivals = 0
    let localPauseUntil = Number.NEGATIVE_INFINITY

    // The dispatcher: one fiber and at most one live timer, armed for the earliest instant anything
    // can start. Everything below runs synchronously between its suspensions.
    const wake = yield* Effect.makeLatch(false)
    let timerAt = Number.POSITIVE_INFINITY
    let timerGeneration = 0
    let timer: Fiber.RuntimeFiber<void> | undefined

    const conformsNow = (now: number, cost: number): boolean =>
      algorithm.earliestAll(specs, pacer, now, cost).start <= now + algorithm.EPSILON_MILLIS

    /** Starts every sleeper that may start now; returns when the next one may. */
    const drain = (now: number): number => {
      for (;;) {
        const head = sleepers.peek()
        if (head === undefined) return Number.POSITIVE_INFINITY
        if (head.state !== QUEUED) {
          sleepers.pop()
          continue
        }
        if (localPauseUntil > now + algorithm.EPSILON_MILLIS) return localPauseUntil
        if (head.target > now + algorithm.EPSILON_MILLIS) return head.target
        const start = algorithm.earliestAll(specs, pacer, now, head.cost).start
        if (start > now + algorithm.EPSILON_MILLIS) return start
        algorithm.commitAll(specs, pacer, now, now, head.cost)
        sleepers.pop()
        queued -= 1
        head.state = RELEASED
        head.startedAt = now
        if (head.resume !== undefined) head.resume(Effect.void)
      }
    }

    const fire = (generation: number) =>
      Effect.sync(() => {
        if (generation !== timerGeneration) return
        const lateness = nowMillis(clock) - timerAt
        timerLatenessSeconds.unsafeUpdate(Math.max(0, lateness) / 1000, labels)
        timerAt = Number.POSITIVE_INFINITY
        timer = undefined
        wake.unsafeOpen()
      })

    const step = Effect.suspend(() => {
      wake.unsafeClose()
      const now = nowMillis(clock)
      const wakeAt = drain(now)
      // An armed timer that fires no later is kept: it will wake the dispatcher to look again.
      if (wakeAt === Number.POSITIVE_INFINITY || wakeAt >= timerAt - algorithm.EPSILON_MILLIS) return Effect.void
      const previous = timer
      const generation = ++timerGeneration
      timerAt = wakeAt
      const arm = Effect.fork(Effect.zipRight(clock.sleep(Duration.millis(wakeAt - now)), fire(generation))).pipe(
        Effect.map((fiber) => {
          if (generation === timerGeneration) timer = fiber
        })
      )
      return previous === undefined ? arm : Effect.zipRight(Fiber.interruptFork(previous), arm)
    })

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(wake.await, step)))

    const started = (waitMillis: number): Effect.Effect<void> => {
      waitSeconds.unsafeUpdate(waitMillis / 1000, labels)
      return Effect.annotateCurrentSpan("sluice.limiter.wait_ms", waitMillis)
    }

    const cancel = (waiter: Waiter, cost: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (waiter.state !== QUEUED) return Effect.void
        waiter.state = CANCELLED
        queued -= 1
        // The store gives the slot back only where that cannot add a start to any window; a store
        // that fails to answer loses the slot, which errs on the side of the quota.
        return Effect.ignore(store.refund({ key, limits: specs, cost, reservation: waiter.reservation }))
      })

    const sleepUntilStart = (
      reservation: RateLimiterStore.Reserved,
      cost: number
    ): Effect.Effect<void> => {
      const now = nowMillis(clock)
      if (
        queued === 0 && reservation.delayMillis <= algorithm.EPSILON_MILLIS &&
        now + algorithm.EPSILON_MILLIS >= localPauseUntil && conformsNow(now, cost)
      ) {
        algorithm.commitAll(specs, pacer, now, now, cost)
        return started(0)
      }
      const waiter: Waiter = {
        target: now + reservation.delayMillis,
        order: arrivals++,
        cost,
        reservation: reservation.reservation,
        state: QUEUED,
        startedAt: now,
        resume: undefined
      }
      return Effect.zipRight(
        Effect.async<void>((resume) => {
          waiter.resume = resume
          sleepers.push(waiter)
          queued += 1
          if (waiter.target < timerAt - algorithm.EPSILON_MILLIS) wake.unsafeOpen()
          return cancel(waiter, cost)
        }),
        Effect.suspend(() => started(waiter.startedAt - now))
      )
    }

    const refused = (refusal: RateLimiterStore.Refused, cost: number, maxWaitMillis: number) => {
      const paused = refusal.binding < 0
      rejectedTotal.unsafeUpdate(1, paused ? pausedLabels : quotaLabels)
      return Effect.fail(
        new errors.RateLimitExceeded({
          name,
          reason: paused ? "paused" : "quota",
          retryAfter: Duration.millis(refusal.retryAfterMillis),
          limit: paused ? undefined : limits[refusal.binding],
          cost,
          maxWait: Duration.millis(maxWaitMillis)
        })
      )
    }

    const take = (
      options?: RateLimiter.TakeOptions | undefined
    ): Effect.Effect<void, RateLimiter.RateLimiterError> =>
      Effect.suspend(() => {
        const cost = options?.cost ?? 1
        if (!isPositiveInteger(cost) || cost > maxCost) {
          return illegal(
            name,
            isPositiveInteger(cost)
              ? `cost ${cost} exceeds what ${
                limits.map(errors.describeLimit).join(" and ")
              } can ever hold (${maxCost}); it would wait forever`
              : `cost must be an integer ≥ 1, got ${show(cost)}`
          )
        }
        let maxWaitMillis = resolved.maxWaitMillis
        if (options?.maxWait !== undefined) {
          const decoded = decodeDuration("maxWait", options.maxWait, { allowZero: true, allowInfinite: true })
          if (Either.isLeft(decoded)) return illegal(name, decoded.left)
          maxWaitMillis = decoded.right
        }
        // Reserving and queueing are one step: an interruption in between would lose the slot.
        return Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(
            store.reserve({ key, limits: specs, cost, maxWaitMillis }),
            (result) =>
              result._tag === "Refused"
                ? refused(result, cost, maxWaitMillis)
                : restore(sleepUntilStart(result, cost))
          )
        )
      })

    const pauseFor = (duration: Duration.DurationInput): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> =>
      Effect.suspend(() => {
        const decoded = decodeDuration("pause", duration, { allowZero: true, allowInfinite: false })
        if (Either.isLeft(decoded)) return illegal(name, decoded.left)
        const millis = decoded.right
        return Effect.zipRight(
          store.pause(key, millis),
          // Sleepers of this process already hold reservations from before the pause: hold them
          // too (the dispatcher re-checks when its timer fires).
          Effect.sync(() => {
            localPauseUntil = Math.max(localPauseUntil, nowMillis(clock) + millis)
          })
        )
      })

    const limiter: RateLimiter.RateLimiter = {
      [TypeId]: TypeId,
      name,
      limits,
      maxWait: defaultMaxWait,
      take,
      run: (self, options) => Effect.zipRight(take(options), self),
      pauseFor,
      pauseRemaining: Effect.map(store.readPause(key), (millis) => Duration.millis(millis))
    }
    return limiter
  })

/** @internal */
export const make = (
  options: RateLimiter.Options & { readonly store?: RateLimiterStore.Service | undefined }
): Effect.Effect<RateLimiter.RateLimiter, never, Scope.Scope | RateLimiterStore.RateLimiterStore> =>
  Effect.suspend(() => {
    const name: unknown = options.name
    if (typeof name !== "string" || name.length === 0) {
      return illegal(String(name), `name must be a non-empty string, got ${show(name)}`)
    }
    const resolved = resolve(options)
    if (Either.isLeft(resolved)) return illegal(name, resolved.left)
    return options.store !== undefined
      ? makeWith(name, resolved.right, options.store)
      : Effect.flatMap(RateLimiterStore.RateLimiterStore, (store) => makeWith(name, resolved.right, store))
  })

/** @internal */
export const withRateLimiter = dual<
  (
    limiter: RateLimiter.RateLimiter,
    options?: RateLimiter.TakeOptions | undefined
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | RateLimiter.RateLimiterError, R>,
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    limiter: RateLimiter.RateLimiter,
    options?: RateLimiter.TakeOptions | undefined
  ) => Effect.Effect<A, E | RateLimiter.RateLimiterError, R>
>((args) => Effect.isEffect(args[0]), (self, limiter, options) => limiter.run(self, options))

// -----------------------------------------------------------------------------
// layers and config
// -----------------------------------------------------------------------------

/** @internal */
export const layer = <I>(
  tag: Context.Tag<I, RateLimiter.RateLimiter>,
  options: RateLimiter.Options
): Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> => Layer.scoped(tag, make(options))

/** @internal */
export const layerConfig = <I>(
  tag: Context.Tag<I, RateLimiter.RateLimiter>,
  config: Config.Config<RateLimiter.Options>
): Layer.Layer<I, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore> =>
  Layer.scoped(tag, Effect.flatMap(config, make))

/** @internal */
export const config: Config.Config<RateLimiter.Settings> = Config.all({
  limit: Config.integer("LIMIT"),
  window: Config.duration("WINDOW"),
  burst: Config.option(Config.integer("BURST")),
  algorithm: Config.literal("gcra", "fixed-window", "sliding-window")("ALGORITHM").pipe(
    Config.withDefault("gcra" as const)
  ),
  maxWait: Config.option(Config.duration("MAX_WAIT"))
}).pipe(
  Config.mapOrFail(({ algorithm, burst, limit, maxWait, window }) => {
    const settings: RateLimiter.Settings = {
      limit,
      window,
      algorithm,
      burst: Option.getOrUndefined(burst),
      maxWait: Option.getOrUndefined(maxWait)
    }
    const resolved = resolve(settings)
    return Either.isLeft(resolved)
      ? Either.left(ConfigError.InvalidData([], `invalid rate limiter settings: ${resolved.left}`))
      : Either.right(settings)
  })
)

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): RateLimiter.TagClass<Self, Id> => {
  const tag = Context.Tag(`@sluice/rate-limiter/${id}` as const)<Self, RateLimiter.RateLimiter>()
  return Object.assign(tag, {
    id,
    layer: (settings: RateLimiter.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<RateLimiter.Settings>) =>
      layerConfig(tag, Config.map(config, (settings): RateLimiter.Options => ({ ...settings, name: id })))
  })
}
