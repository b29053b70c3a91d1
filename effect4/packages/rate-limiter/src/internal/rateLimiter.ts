/** @internal */
import * as algorithm from "@sluice/core/Algorithm"
import { Pacer } from "@sluice/core/Pacer"
import { StartQueue } from "@sluice/core/StartQueue"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import * as Metric from "effect/Metric"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Tracer from "effect/Tracer"
import type * as RateLimiter from "../RateLimiter.js"
import * as RateLimiterStore from "../RateLimiterStore.js"
import { nowMillis } from "./memoryStore.js"
import { seriesOf } from "./metrics.js"
import * as requests from "./requests.js"
import { decodePause, defect, illegal, resolve, type Resolved, show, who } from "./settings.js"
import * as usage from "./usage.js"
import { DONE, QUEUED, type Waiter } from "./waiter.js"

/** @internal */
export const TypeId: RateLimiter.TypeId = Symbol.for("@sluice/rate-limiter/RateLimiter") as RateLimiter.TypeId

/** @internal */
export const isRateLimiter = (u: unknown): u is RateLimiter.RateLimiter => Predicate.hasProperty(u, TypeId)

// -----------------------------------------------------------------------------
// the limiter
// -----------------------------------------------------------------------------

/** The span attribute that carries the limiter wait, set on the caller's current span if any. */
const waitAttribute = "sluice.limiter.wait_ms"

/** The caller's current span, read off its fiber. */
const spanOf = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.AnySpan | undefined =>
  Context.getOrUndefined(fiber.context, Tracer.ParentSpan)

const makeWith = (
  name: string,
  resolved: Resolved,
  store: RateLimiterStore.Service
): Effect.Effect<RateLimiter.RateLimiter> =>
  Effect.withFiber((maker) => {
    // the maker's clock, so that TestClock drives the limiter; its registry alone, not its whole
    // context: a limiter outlives the scope that made it
    const clock = maker.getRef(Clock.Clock)
    const { dimensions, limits, specs } = resolved
    const series = seriesOf(
      name,
      dimensions,
      Context.make(Metric.MetricRegistry, maker.getRef(Metric.MetricRegistry))
    )
    const shape: usage.Shape = {
      name,
      key: name,
      limits,
      specs,
      dimensions,
      series,
      maxResetAfterMillis: resolved.maxResetAfterMillis
    }
    const key = name
    const defaultMaxWait = Duration.millis(resolved.maxWaitMillis)
    const { defaultRequest, requestFor } = requests.make(shape, resolved.maxWaitMillis)
    const refused = requests.refusal(name, limits, series)

    // Waiting callers queue in the order of their reserved starts, and only the queue's head keeps
    // a timer: it sleeps until its start, starts, and wakes the next, who sleeps until its own. So
    // 5,000 takers that reserve at once set one timer at a time, not 5,000, and timers that fire
    // late never wake a crowd. Each start also passes the local pacer: the same limits, applied to
    // the actual starts of this process. Reservations already obey them, so with punctual timers
    // it holds no one (exact starts under TestClock); after a late timer it lets at most `burst`
    // start at once and spaces the rest. No fiber of the limiter's own is involved: every caller
    // sleeps and starts in its own fiber.
    const pacer = new Pacer(specs)
    const queue = new StartQueue<Waiter>()

    // The span is read off the caller's fiber, which costs nothing on a call made outside a span.
    const recordStart = (waitMillis: number, span: Tracer.AnySpan | undefined): void => {
      series.wait.updateUnsafe(waitMillis / 1000, series.context)
      if (span !== undefined && span._tag === "Span") span.attribute(waitAttribute, waitMillis)
    }

    const begin = (waiter: Waiter, now: number): Effect.Effect<void> => {
      if (!waiter.unlimited) waiter.local = pacer.charge(now, waiter.costs, waiter.track)
      waiter.state = DONE
      recordStart(now - waiter.decidedAt, waiter.span)
      return Effect.void
    }

    /** Takes `waiter` out of the queue; a new head is woken to take over the timer. */
    const unlink = (waiter: Waiter): void => {
      const next = queue.unlink(waiter)
      if (next !== undefined && next.resume !== undefined) {
        const resume = next.resume
        next.resume = undefined
        resume(Effect.void)
      }
    }

    /** When `waiter` may start as far as this process knows: its reservation, the pause, the pacer. */
    const localStart = (waiter: Waiter, now: number): number =>
      pacer.startAt(waiter.target, now, waiter.costs, waiter.unlimited)

    /**
     * The start `at` lies beyond the caller's `maxWait`: it fails as the store would have, and
     * `abandon` gives its reservation back.
     */
    const tooLate = (waiter: Waiter, now: number, at: number): Effect.Effect<never, RateLimiter.RateLimiterError> => {
      const binding = pacer.pausedAt(at) ? -1 : pacer.binding(now, waiter.costs)
      return refused(
        { _tag: "Refused", delayMillis: at - now, retryAfterMillis: Math.max(0, at - waiter.deadline), binding },
        { ...defaultRequest, cost: Math.max(...waiter.costs), costs: waiter.costs, maxWaitMillis: waiter.maxWaitMillis }
      )
    }

    /**
     * The head of the queue: start when its reservation, the pause and the pacer allow, sleeping
     * until then; a caller queued ahead of it meanwhile (an earlier start) goes first. A start
     * beyond the caller's `maxWait` (the pacer holds it after the store lost its state, a pause
     * came after its reservation) fails instead: `maxWait` bounds the whole wait.
     */
    const lead = (waiter: Waiter): Effect.Effect<void, RateLimiter.RateLimiterError> => {
      if (waiter !== queue.head) return Effect.flatMap(awaitTurn(waiter), () => lead(waiter))
      const now = nowMillis(clock)
      const at = localStart(waiter, now)
      if (at > waiter.target + algorithm.EPSILON_MILLIS) expireBehind(waiter, now, at)
      if (at > waiter.deadline + algorithm.EPSILON_MILLIS) return tooLate(waiter, now, at)
      if (at > now + algorithm.EPSILON_MILLIS) {
        waiter.plannedAt = at
        return Effect.flatMap(clock.sleep(Duration.millis(at - now)), () => {
          series.lateness.updateUnsafe(Math.max(0, nowMillis(clock) - at) / 1000, series.context)
          return lead(waiter)
        })
      }
      // charged before the next head is woken: a resume may run that head at once, and it must
      // find this start on the pacer
      const started = begin(waiter, now)
      unlink(waiter)
      return started
    }

    const awaitTurn = (waiter: Waiter): Effect.Effect<void, RateLimiter.RateLimiterError> =>
      Effect.callback<void, RateLimiter.RateLimiterError>((resume) => {
        if (waiter === queue.head) resume(Effect.void)
        else waiter.resume = resume
      })

    /**
     * The head starts at `at`, later than its reservation (the pacer or a pause holds it): a
     * caller behind it whose `maxWait` ends before then cannot start in time, and fails now. Only
     * then is the queue walked; a caller's deadline is never earlier than the head's reservation,
     * so without such a hold everyone reaches the head in time to judge for itself, and queued
     * callers keep needing no timer of their own.
     */
    const expireBehind = (leader: Waiter, now: number, at: number): void => {
      for (let behind = leader.next; behind !== undefined; behind = behind.next) {
        const resume = behind.resume
        if (resume !== undefined && behind.deadline + algorithm.EPSILON_MILLIS < at) {
          behind.resume = undefined
          resume(tooLate(behind, now, Math.max(at, localStart(behind, now))))
        }
      }
    }

    /** Interrupted before it started: leave the queue, and give the slot back where the store can. */
    const abandon = (waiter: Waiter): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (waiter.state === DONE) return Effect.void
        unlink(waiter)
        waiter.state = DONE
        waiter.resume = undefined
        // The store gives the slot back only where that cannot add a start to any window; a store
        // that fails to answer loses the slot, which errs on the side of the quota.
        return Effect.ignore(
          store.refund({
            key,
            limits: specs,
            cost: Math.max(...waiter.costs),
            costs: waiter.costs,
            reservation: waiter.reservation,
            restore: waiter.restore
          })
        )
      })

    const reserved = (
      result: RateLimiterStore.Reserved,
      request: RateLimiterStore.ReserveRequest,
      span: Tracer.AnySpan | undefined,
      track: boolean
    ): Effect.Effect<usage.LocalCharge | undefined, RateLimiter.RateLimiterError> => {
      const costs = RateLimiterStore.costsOf(request)
      const now = nowMillis(clock)
      // A pause another process set reaches this one with its next decision: hold the callers
      // that reserved before it too.
      if (result.pausedMillis !== undefined && result.pausedMillis > 0) pacer.pauseFor(now, result.pausedMillis)
      const delay = result.delayMillis
      const unlimited = result.unlimited === true
      if (
        delay <= algorithm.EPSILON_MILLIS && queue.head === undefined &&
        (unlimited ? pacer.unpaused(now) : pacer.mayStart(now, costs))
      ) {
        const local = unlimited ? undefined : pacer.charge(now, costs, track)
        recordStart(0, span)
        return Effect.succeed(local)
      }
      const waiter: Waiter = {
        costs,
        reservation: result.reservation,
        restore: result.restore,
        target: now + delay,
        decidedAt: now,
        deadline: now + request.maxWaitMillis,
        maxWaitMillis: request.maxWaitMillis,
        unlimited,
        track,
        local: undefined,
        plannedAt: now + delay,
        span,
        state: QUEUED,
        prev: undefined,
        next: undefined,
        resume: undefined
      }
      // Queued and guarded in one uninterruptible step, so every queued caller either starts or
      // leaves the queue: an interruption before the step runs loses the slot and queues nothing.
      // The wait alone is interruptible; it fails only when it would outlast `maxWait`. Either way
      // the caller leaves before its start, and gives its reservation back.
      return Effect.uninterruptibleMask((restore) => {
        queue.enqueue(waiter)
        // behind a head asleep past this caller's maxWait: it cannot start in time
        const head = queue.head
        const ahead = head !== undefined && head !== waiter ? head.plannedAt : now
        return Effect.catchCause(
          restore(Effect.suspend(() =>
            ahead > waiter.deadline + algorithm.EPSILON_MILLIS
              ? tooLate(waiter, now, Math.max(ahead, localStart(waiter, now)))
              : Effect.map(lead(waiter), () => waiter.local)
          )),
          (cause) => Effect.andThen(abandon(waiter), Effect.failCause(cause))
        )
      })
    }

    /** Decides, then waits for the start; `onStart` builds what the caller gets once started. */
    const decide = <A>(
      options: RateLimiter.TakeOptions | undefined,
      track: boolean,
      onStart: (
        request: RateLimiterStore.ReserveRequest,
        reserved: RateLimiterStore.Reserved,
        local: usage.LocalCharge | undefined
      ) => A
    ): Effect.Effect<A, RateLimiter.RateLimiterError> =>
      Effect.withFiber((fiber) => {
        const request = requestFor(options)
        if (Result.isFailure(request)) {
          return typeof request.failure === "string" ? illegal(name, request.failure) : Effect.fail(request.failure)
        }
        const span = spanOf(fiber)
        // The decision stays interruptible: a caller interrupted while it is in flight (a total
        // timeout, a shutdown) leaves at once, and its slot, if one was reserved, is lost, never
        // used twice.
        return Effect.flatMap(
          store.reserve(request.success),
          (result) =>
            result._tag === "Refused"
              ? refused(result, request.success)
              : Effect.map(
                reserved(result, request.success, span, track),
                (local) => onStart(request.success, result, local)
              )
        )
      })

    const take = (options?: RateLimiter.TakeOptions | undefined): Effect.Effect<void, RateLimiter.RateLimiterError> =>
      decide(options, false, () => undefined)

    const reserve = (
      options?: RateLimiter.TakeOptions | undefined
    ): Effect.Effect<RateLimiter.Reservation, RateLimiter.RateLimiterError> =>
      decide(options, true, (request, result, local) =>
        usage.makeReservation(
          shape,
          store,
          RateLimiterStore.costsOf(request),
          result,
          (reserved, actual, released) => {
            if (local !== undefined) pacer.settle(local, reserved, actual, released, nowMillis(clock))
          }
        ))

    const pauseFor = (duration: Duration.Input): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> =>
      Effect.suspend(() => {
        const decoded = decodePause(duration)
        if (Result.isFailure(decoded)) return illegal(name, decoded.failure)
        const millis = Duration.toMillis(decoded.success)
        return Effect.andThen(
          store.pause(key, millis),
          // Callers of this process already hold reservations from before the pause: the pacer
          // holds them too, whenever they wake.
          Effect.sync(() => pacer.pauseFor(nowMillis(clock), millis))
        )
      })

    const limiter: RateLimiter.RateLimiter = {
      [TypeId]: TypeId,
      name,
      limits,
      dimensions,
      maxWait: defaultMaxWait,
      take,
      reserve,
      tighten: (observations) => usage.tighten(shape, store, observations),
      run: (self, options) => Effect.andThen(take(options), self),
      pauseFor,
      pauseRemaining: Effect.map(store.readPause(key), (millis) => Duration.millis(millis))
    }
    return Effect.succeed(limiter)
  })

/** @internal */
export const make = (
  options: RateLimiter.Options & { readonly store?: RateLimiterStore.Service | undefined }
): Effect.Effect<RateLimiter.RateLimiter, never, RateLimiterStore.RateLimiterStore> =>
  Effect.suspend(() => {
    const name: unknown = options.name
    if (typeof name !== "string" || name.length === 0) {
      return illegal(String(name), `name must be a non-empty string, got ${show(name)}`)
    }
    const resolved = resolve(options, who(name))
    if (Result.isFailure(resolved)) return defect(resolved.failure)
    return options.store !== undefined
      ? makeWith(name, resolved.success, options.store)
      : Effect.flatMap(RateLimiterStore.RateLimiterStore, (store) => makeWith(name, resolved.success, store))
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
