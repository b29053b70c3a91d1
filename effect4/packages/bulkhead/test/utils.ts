import type { Bulkhead } from "@sluice/bulkhead"
import type { Fiber } from "effect"
import { Deferred, Effect, Metric } from "effect"

let counter = 0
/** A name no other test uses: metrics live in one registry for the whole process. */
export const uniqueName = (prefix: string): string => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** The state of a metric for one bulkhead, by its `name` attribute (and optional extra ones). */
export const metricOf = <Input, State>(
  metric: Metric.Metric<Input, State>,
  name: string,
  extra: Record<string, string> = {}
): Effect.Effect<State> => Metric.value(Metric.withAttributes(metric, { name, ...extra }))

/**
 * Lets every runnable fiber take `turns` scheduler turns: enough for forked fibers to reach the
 * point where they wait, without moving the TestClock.
 */
export const yieldTurns = (turns = 20): Effect.Effect<void> => Effect.repeat(Effect.yieldNow, { times: turns })

/**
 * A call that records when it starts and ends, and holds its permits until told to finish: the
 * test decides, step by step, when each holder lets go, and how (success, failure or defect).
 */
export interface Held {
  readonly id: string
  readonly started: Deferred.Deferred<void>
  readonly finish: Deferred.Deferred<void, string>
  readonly fiber: Fiber.Fiber<void, string | Bulkhead.BulkheadError>
  readonly hasStarted: Effect.Effect<boolean>
}

export const hold = (
  bulkhead: Bulkhead.Bulkhead,
  id: string,
  options?: Bulkhead.RunOptions,
  log?: Array<string>
): Effect.Effect<Held> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const finish = yield* Deferred.make<void, string>()
    const fiber = yield* bulkhead.run(
      Effect.andThen(
        Effect.suspend(() => {
          log?.push(id)
          return Deferred.succeed(started, undefined)
        }),
        Deferred.await(finish)
      ),
      options
    ).pipe(Effect.forkChild)
    // let the new fiber reach the bulkhead, so that arrival order is the order of `hold` calls
    yield* yieldTurns(5)
    return { id, started, finish, fiber, hasStarted: Deferred.isDone(started) }
  })

/** Asserts that a bulkhead is back to rest: nothing held, nobody queued, every permit usable. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead): Effect.Effect<Bulkhead.Stats> =>
  Effect.gen(function*() {
    const stats = yield* bulkhead.stats
    if (stats.inFlight !== 0 || stats.holders !== 0 || stats.waiting !== 0 || stats.waitingPermits !== 0) {
      return yield* Effect.die(new Error(`bulkhead not idle: ${JSON.stringify(stats)}`))
    }
    // every permit can be taken at once, without waiting
    yield* bulkhead.run(Effect.void, { permits: stats.permits, maxWait: 0 }).pipe(
      Effect.catch((e) => Effect.die(new Error(`permits missing: ${e.message}`)))
    )
    return stats
  })
