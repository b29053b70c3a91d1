import type { Lane } from "@sluice/core/LaneQueue"
import { LaneQueue, LaneTicket } from "@sluice/core/LaneQueue"
import { PermitQueue } from "@sluice/core/PermitQueue"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import * as Metric from "effect/Metric"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Api from "../Bulkhead.js"
import { BulkheadFull, PermitWaitTimeout } from "../BulkheadError.js"
import type { LaneInfo } from "../BulkheadLanes.js"
import * as Lanes from "./lanes.js"
import { inFlightGauge, permitsGauge, type Series, seriesOf } from "./metrics.js"
import { decodeRunOptions, decodeSettings, illegal, isPositiveInteger, show } from "./validation.js"

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("@sluice/bulkhead/Bulkhead") as Api.TypeId

/** @internal */
export const isBulkhead = (u: unknown): u is Api.Bulkhead<unknown> => Predicate.hasProperty(u, TypeId)

// ---------------------------------------------------------------------------------------------
// the bulkhead
// ---------------------------------------------------------------------------------------------

/**
 * A queued caller: its place in the queue, and how to wake its fiber. A lane ticket, which has
 * every field of the plain queue's ticket too, so that either queue takes it.
 */
class Waiter extends LaneTicket {
  /** Set once the caller's fiber suspends; a grant or an expiry before that finds it undefined. */
  resume: ((effect: Effect.Effect<void, PermitWaitTimeout>) => void) | undefined = undefined
  /** Set when the budget ran out, for a fiber that suspends after that. */
  timedOut: Effect.Effect<never, PermitWaitTimeout> | undefined = undefined
}

const resumeWith: Effect.Effect<void> = Effect.void

/**
 * What the bulkhead asks of its queue: `PermitQueue` without lanes, `LaneQueue` with them. A
 * plain queue ignores the lane and the time, which only a lane queue reads.
 */
interface Queue {
  permits: number
  readonly inFlight: number
  readonly holders: number
  readonly waiting: number
  readonly waitingPermits: number
  tryTake(cost: number, lane: Lane<Waiter> | undefined): boolean
  enqueue(ticket: Waiter, lane: Lane<Waiter> | undefined, now: number): Waiter
  hold(ticket: Waiter): void
  release(cost: number): void
  abandon(ticket: Waiter): void
  leave(ticket: Waiter): boolean
  resize(permits: number): void
  dispatch(): void
}

class BulkheadImpl implements Api.Bulkhead {
  readonly [TypeId]: Api.TypeId = TypeId
  readonly name: string
  readonly maxPermits: number
  readonly maxWaiting: number
  readonly maxWait: Duration.Duration
  /** A call's own options, decoded only when it sets `maxWait`. */
  readonly decodeRunOptions: (options: Api.RunOptions) => { readonly maxWait?: Duration.Duration | undefined }
  /** Who holds permits and who is next: the pure core, which knows nothing of fibers. */
  readonly queue: Queue
  /** The lanes, when the bulkhead has them (`lanes` option). */
  readonly lanes: { readonly setup: Lanes.Setup; readonly queue: LaneQueue<Waiter> } | undefined

  /** The series recorded without lanes; with lanes each lane has its own. */
  readonly series: Series
  readonly inFlightGauge: typeof inFlightGauge
  readonly permitsGauge: typeof permitsGauge
  /** Where the metrics are recorded: the registry of the fiber that made the bulkhead. */
  readonly context: Context.Context<never>
  /** The release handlers of a call of cost 1, the common case, made once instead of per call. */
  readonly releaseOne: Releasing

  constructor(options: Api.Options, context: Context.Context<never>) {
    const name = options.name
    if (typeof name !== "string" || name.length === 0) {
      throw illegal(`a bulkhead needs a non-empty name, got ${show(name)}`)
    }
    const settings = decodeSettings(name)(options)
    const order = settings.order ?? "fifo"
    this.name = name
    this.maxPermits = settings.maxPermits ?? settings.permits
    this.maxWaiting = settings.maxWaiting ?? Infinity
    this.maxWait = settings.maxWait ?? Duration.infinity
    this.decodeRunOptions = decodeRunOptions(name)
    this.context = context
    const attributes = { name }
    const series = seriesOf(attributes)
    this.series = series
    const inFlightOf = Metric.withAttributes(inFlightGauge, attributes)
    this.inFlightGauge = inFlightOf
    this.permitsGauge = Metric.withAttributes(permitsGauge, attributes)
    const granted = (waiter: Waiter) => {
      if (waiter.resume !== undefined) waiter.resume(resumeWith)
    }
    const inFlight = (n: number) => inFlightOf.updateUnsafe(n, context)
    if (options.lanes === undefined) {
      this.lanes = undefined
      this.queue = new PermitQueue<Waiter>(settings.permits, order, {
        granted,
        inFlight,
        waiting: (n) => series.waiting.updateUnsafe(n, context)
      })
    } else {
      if (settings.order !== undefined) {
        throw illegal(`bulkhead "${name}": lanes decide the order; order is not taken with them`)
      }
      const setup = Lanes.decode(name, options.lanes)
      const queue: LaneQueue<Waiter> = new LaneQueue<Waiter>(settings.permits, setup.policy, {
        granted,
        inFlight,
        waiting: (lane) => {
          // per lane only, as the waits and refusals are: a sum over `lane` is the whole queue
          setup.limitsOf(lane.name).series.waiting.updateUnsafe(lane.waiting, context)
        }
      })
      this.lanes = { setup, queue }
      this.queue = queue
    }
    this.releaseOne = releasing(this.queue, 1)
    this.permitsGauge.updateUnsafe(settings.permits, context)
    inFlightOf.updateUnsafe(0, context)
    if (this.lanes === undefined) series.waiting.updateUnsafe(0, context)
  }

  // --- the effects ----------------------------------------------------------------------------

  /** `Bulkhead.laneOf`: the lane a call naming `name` waits in, and its budget, making none. */
  laneInfo(name: string | undefined): LaneInfo | undefined {
    const lanes = this.lanes
    if (lanes === undefined) return undefined
    const lane = name ?? lanes.setup.defaultLane
    if (lane.length === 0 || (lanes.setup.policy._tag === "priority" && !lanes.queue.lanes.has(lane))) {
      return undefined
    }
    return { name: lane, maxWait: lanes.setup.limitsOf(lane).maxWait ?? this.maxWait }
  }

  /** The lane a call goes to: the one it names, or the default one; an unknown lane is a defect. */
  private laneFor(options: Api.RunOptions | undefined): Lane<Waiter> | undefined {
    const lanes = this.lanes
    if (lanes === undefined) return undefined
    const name = options?.lane ?? lanes.setup.defaultLane
    const lane = typeof name === "string" && name.length > 0 ? lanes.queue.laneOf(name) : undefined
    if (lane === undefined) {
      throw illegal(
        `bulkhead "${this.name}": no lane ${show(name)} (its lanes: ${[...lanes.queue.lanes.keys()].join(", ")})`
      )
    }
    return lane
  }

  private costOf(options: Api.RunOptions | undefined): number {
    const cost = options?.permits ?? options?.cost ?? 1
    if (!isPositiveInteger(cost) || cost > this.maxPermits) {
      throw illegal(
        `bulkhead "${this.name}": permits must be an integer from 1 to maxPermits (${this.maxPermits}), got ${
          show(cost)
        }`
      )
    }
    return cost
  }

  /**
   * Takes the permits. Returns their number when they were free (the fast path, no effect to
   * run), or else the effect that waits for them. Runs inside `uninterruptibleMask`; only the wait
   * itself is interruptible (through `restore`). The caller owes `release(cost)` once it holds them.
   */
  private acquireMasked(
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    fiber: Fiber.Fiber<unknown, unknown> | undefined,
    options: Api.RunOptions | undefined
  ): number | Effect.Effect<number, Api.BulkheadError> {
    let cost: number
    let maxWait: Duration.Duration
    let lane: Lane<Waiter> | undefined
    let limits: Lanes.LaneLimits | undefined
    try {
      cost = this.costOf(options)
      lane = this.laneFor(options)
      limits = lane === undefined ? undefined : this.lanes?.setup.limitsOf(lane.name)
      const ownMaxWait = limits?.maxWait ?? this.maxWait
      maxWait = options?.maxWait === undefined ? ownMaxWait : this.decodeRunOptions(options).maxWait ?? ownMaxWait
    } catch (defect) {
      return Effect.die(defect)
    }
    const queue = this.queue
    const series = limits?.series ?? this.series
    const context = this.context
    if (queue.tryTake(cost, lane)) {
      series.permitWait.updateUnsafe(0, context)
      annotate(fiber, 0)
      return cost
    }
    const laneWaiting = lane?.waiting ?? 0
    const laneMaxWaiting = limits?.maxWaiting ?? Infinity
    const laneFull = laneWaiting >= laneMaxWaiting
    const full = laneFull || queue.waiting >= this.maxWaiting
    // the fiber's own Clock, so that TestClock drives the budget and the measured wait
    const clock = fiber === undefined ? Context.get(context, Clock.Clock) : fiber.getRef(Clock.Clock)
    if (lane !== undefined && (full || Duration.isZero(maxWait))) {
      // with lanes a newcomer may rank ahead of every waiter and find its permits free: it is
      // granted without waiting, so neither a full queue nor a zero budget refuses it
      const probe = queue.enqueue(new Waiter(cost), lane, clock.currentTimeMillisUnsafe())
      if (probe.state === "granted") {
        queue.hold(probe)
        series.permitWait.updateUnsafe(0, context)
        annotate(fiber, 0)
        return cost
      }
      queue.leave(probe)
      queue.dispatch()
    }
    if (full) {
      series.full.updateUnsafe(1, context)
      return Effect.fail(
        new BulkheadFull({
          bulkhead: this.name,
          ...(lane === undefined ? {} : { lane: lane.name, bound: laneFull ? "lane" : "bulkhead" }),
          requested: cost,
          cost,
          permits: queue.permits,
          inFlight: queue.inFlight,
          waiting: laneFull ? laneWaiting : queue.waiting,
          maxWaiting: laneFull ? laneMaxWaiting : this.maxWaiting
        })
      )
    }
    if (Duration.isZero(maxWait)) {
      series.timeout.updateUnsafe(1, context)
      return Effect.fail(
        this.timeoutError(cost, Duration.zero, lane === undefined ? queue.waiting : lane.waiting, lane)
      )
    }
    const start = clock.currentTimeNanosUnsafe()
    const waiter = queue.enqueue(new Waiter(cost), lane, clock.currentTimeMillisUnsafe())
    const wait = Effect.callback<void, Api.PermitWaitTimeout>((resume) => {
      if (waiter.state === "queued") waiter.resume = resume
      else resume(waiter.timedOut ?? resumeWith)
    })
    const waitEnded = (exit: Exit.Exit<void, Api.PermitWaitTimeout>) => {
      if (Exit.isSuccess(exit)) {
        queue.hold(waiter)
        const waited = Number(clock.currentTimeNanosUnsafe() - start) / 1e9
        series.permitWait.updateUnsafe(waited, context)
        annotate(fiber, waited * 1000)
      } else {
        queue.abandon(waiter)
      }
    }
    if (!Duration.isFinite(maxWait)) {
      return restore(wait).pipe(Effect.onExit((exit) => Effect.sync(() => waitEnded(exit))), Effect.as(cost))
    }
    // The budget runs on a timer fiber of its own, so that a grant resumes the waiter directly, in
    // one hop, like a waiter without a budget: grants then resume in the order they were made.
    const timer = Effect.interruptible(
      Effect.andThen(clock.sleep(maxWait), Effect.sync(() => this.expire(waiter, maxWait)))
    )
    return Effect.flatMap(Effect.forkChild(timer), (timerFiber) =>
      restore(wait).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            waitEnded(exit)
            // not awaited, as the grant itself is not: the timer only has its sleep to stop
            timerFiber.interruptUnsafe()
          })
        ),
        Effect.as(cost)
      ))
  }

  /** The waiter's budget ran out while it was still queued: it leaves with PermitWaitTimeout. */
  private expire(waiter: Waiter, maxWait: Duration.Duration): void {
    const lane = waiter.lane
    if (!this.queue.leave(waiter)) return
    const limits = lane === undefined ? undefined : this.lanes?.setup.limitsOf(lane.name)
    ;(limits?.series ?? this.series).timeout.updateUnsafe(1, this.context)
    waiter.timedOut = Effect.fail(this.timeoutError(waiter.cost, maxWait, waiter.aheadWhenQueued, lane))
    if (waiter.resume !== undefined) waiter.resume(waiter.timedOut)
    // the waiter may have been a heavy head holding lighter ones back
    this.queue.dispatch()
  }

  private timeoutError(
    cost: number,
    waited: Duration.Duration,
    ahead: number,
    lane: Lane<Waiter> | undefined
  ): PermitWaitTimeout {
    return new PermitWaitTimeout({
      bulkhead: this.name,
      ...(lane === undefined ? {} : { lane: lane.name }),
      waited,
      requested: cost,
      cost,
      permits: this.queue.permits,
      inFlight: this.queue.inFlight,
      aheadWhenQueued: ahead
    })
  }

  run<A, E, R>(self: Effect.Effect<A, E, R>, options?: Api.RunOptions): Effect.Effect<A, E | Api.BulkheadError, R> {
    // The mask's body runs inside the fiber, already uninterruptible: the permits are taken and the
    // release installed before any interruption can be seen. Only the wait and `self` are
    // interruptible (as the caller was), through `restore`.
    return Effect.uninterruptibleMask((restore) => {
      const acquired = this.acquireMasked(restore, currentFiber(), options)
      return typeof acquired === "number"
        ? this.holding(restore(self), acquired)
        : Effect.flatMap(acquired, (cost) => this.holding(restore(self), cost))
    })
  }

  /** Runs `effect` and then gives `cost` permits back, however it ends. */
  private holding<A, E, R>(effect: Effect.Effect<A, E, R>, cost: number): Effect.Effect<A, E, R> {
    // the handlers pass the exit through unchanged, so the call keeps its own types
    return Effect.matchCauseEffect(effect, cost === 1 ? this.releaseOne : releasing(this.queue, cost)) as Effect.Effect<
      A,
      E,
      R
    >
  }

  acquire(options?: Api.RunOptions): Effect.Effect<void, Api.BulkheadError, Scope.Scope> {
    return Effect.uninterruptibleMask((restore) => {
      const acquired = this.acquireMasked(restore, currentFiber(), options)
      const release = (cost: number) => Effect.addFinalizer(() => Effect.sync(() => this.queue.release(cost)))
      return typeof acquired === "number" ? release(acquired) : Effect.flatMap(acquired, release)
    })
  }

  resize(permits: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!isPositiveInteger(permits) || permits > this.maxPermits) {
        return Effect.die(
          illegal(
            `bulkhead "${this.name}": resize needs an integer from 1 to maxPermits (${this.maxPermits}), got ${
              show(permits)
            }`
          )
        )
      }
      this.permitsGauge.updateUnsafe(permits, this.context)
      this.queue.resize(permits)
      return Effect.void
    })
  }

  get stats(): Effect.Effect<Api.Stats> {
    const queue = this.queue
    return Effect.sync(() => ({
      name: this.name,
      permits: queue.permits,
      maxPermits: this.maxPermits,
      inFlight: queue.inFlight,
      holders: queue.holders,
      waiting: queue.waiting,
      waitingPermits: queue.waitingPermits,
      maxWaiting: this.maxWaiting,
      ...(this.lanes === undefined ? {} : {
        lanes: [...this.lanes.queue.lanes.values()].map((lane) => ({
          name: lane.name,
          waiting: lane.waiting,
          waitingPermits: lane.waitingPermits,
          granted: lane.granted,
          ...(this.lanes?.setup.policy._tag === "fairShare" ? { weight: lane.weight } : {})
        }))
      })
    }))
  }
}

interface Releasing {
  readonly onFailure: (cause: Cause.Cause<unknown>) => Effect.Effect<never, unknown>
  readonly onSuccess: (value: unknown) => Effect.Effect<unknown>
}

/** Handlers that give back `cost` permits when a call ends, then pass its exit on. */
const releasing = (queue: Queue, cost: number): Releasing => ({
  onFailure: (cause) => {
    queue.release(cost)
    return Effect.failCause(cause)
  },
  onSuccess: (value) => {
    queue.release(cost)
    return Effect.succeed(value)
  }
})

/** The fiber running the current effect: always set while a fiber evaluates an effect. */
const currentFiber = (): Fiber.Fiber<unknown, unknown> | undefined => Fiber.getCurrent()

/** The span attribute that carries the permit wait, set on the caller's current span if any. */
const permitWaitAttribute = "sluice.bulkhead.permit_wait_ms"

const annotate = (fiber: Fiber.Fiber<unknown, unknown> | undefined, waitedMs: number): void => {
  const span = fiber === undefined ? undefined : Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  if (span !== undefined && span._tag === "Span") span.attribute(permitWaitAttribute, waitedMs)
}

/** @internal */
export const makeUnsafe = (
  options: Api.Options,
  maker: Fiber.Fiber<unknown, unknown> | undefined = Fiber.getCurrent()
): Api.Bulkhead => {
  // the registry alone, not the maker's whole context: a bulkhead outlives the scope that made it
  const registry = maker === undefined ? Context.empty() : Context.make(
    Metric.MetricRegistry,
    maker.getRef(Metric.MetricRegistry)
  )
  const impl = new BulkheadImpl(options, registry)
  // bind the methods so that `const { run } = bulkhead` works as users expect of a service
  return {
    [TypeId]: TypeId,
    name: impl.name,
    maxPermits: impl.maxPermits,
    maxWait: impl.maxWait,
    ...(impl.lanes === undefined ? {} : { laneOf: (lane: string | undefined) => impl.laneInfo(lane) }),
    run: (self, options) => impl.run(self, options),
    acquire: (options) => impl.acquire(options),
    resize: (permits) => impl.resize(permits),
    stats: impl.stats
  }
}

/** @internal */
export const make = (options: Api.Options): Effect.Effect<Api.Bulkhead> =>
  Effect.withFiber((fiber) => Effect.sync(() => makeUnsafe(options, fiber)))

/** @internal */
export const withBulkhead = dual<
  <EB = never>(
    bulkhead: Api.Bulkhead<EB>,
    options?: Api.RunOptions | undefined
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Api.BulkheadError | EB, R>,
  <A, E, R, EB = never>(
    self: Effect.Effect<A, E, R>,
    bulkhead: Api.Bulkhead<EB>,
    options?: Api.RunOptions | undefined
  ) => Effect.Effect<A, E | Api.BulkheadError | EB, R>
>((args) => Effect.isEffect(args[0]), (self, bulkhead, options) => bulkhead.run(self, options))
