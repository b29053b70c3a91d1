import type { Bulkhead } from "@sluice/bulkhead"
import { yieldTurns } from "@sluice/test-utils/turns"
import type { Fiber } from "effect"
import { Deferred, Effect } from "effect"

export { metricOf, uniqueName } from "@sluice/test-utils/metrics"
export { yieldTurns } from "@sluice/test-utils/turns"

/**
 * A call that records when it starts and ends, and holds its permits until told to finish: the
 * test decides, step by step, when each holder lets go, and how (success, failure or defect).
 */
export interface Held {
  readonly id: string
  readonly started: Deferred.Deferred<void>
  readonly finish: Deferred.Deferred<void, string>
  readonly fiber: Fiber.RuntimeFiber<void, string | Bulkhead.BulkheadError>
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
      Effect.zipRight(
        Effect.suspend(() => {
          log?.push(id)
          return Deferred.succeed(started, undefined)
        }),
        Deferred.await(finish)
      ),
      options
    ).pipe(Effect.fork)
    // let the new fiber reach the bulkhead, so that arrival order is the order of `hold` calls
    yield* yieldTurns(5)
    return { id, started, finish, fiber, hasStarted: Deferred.isDone(started) }
  })

/** Asserts that a bulkhead is back to rest: nothing held, nobody queued, every permit usable. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead): Effect.Effect<Bulkhead.Stats> =>
  Effect.gen(function*() {
    const stats = yield* bulkhead.stats
    if (stats.inFlight !== 0 || stats.holders !== 0 || stats.waiting !== 0 || stats.waitingPermits !== 0) {
      return yield* Effect.dieMessage(`bulkhead not idle: ${JSON.stringify(stats)}`)
    }
    // every permit can be taken at once, without waiting
    yield* bulkhead.run(Effect.void, { permits: stats.permits, maxWait: 0 }).pipe(
      Effect.orDieWith((e) => new Error(`permits missing: ${e.message}`))
    )
    return stats
  })
