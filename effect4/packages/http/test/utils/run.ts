/**
 * What the tests run in: the pool and its HttpClient, the memory store, a scope; and a wait for a
 * condition that real I/O makes true.
 */
import { HttpPool } from "@sluice/http"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect } from "effect"
import { TestClock } from "effect/testing"

let counter = 0
/** A provider name no other test uses: metrics are kept per name for the whole process. */
export const uniqueName = (prefix: string) => `${prefix}-${++counter}`

/** Runs `body` with the pool and HttpClient layers, the memory store, and a scope. */
export const run = <A, E, R>(body: Effect.Effect<A, E, R>, pool?: HttpPool.Options) =>
  body.pipe(
    Effect.scoped,
    Effect.provide(HttpPool.layerWithUnboundedHttpClient(pool)),
    Effect.provide(RateLimiterStore.layerMemory)
  )

/** Polls `condition` every 2 ms until it holds; a defect after 5 seconds. */
export const waitUntil = (condition: () => boolean, what: string) =>
  Effect.repeat(Effect.sleep("2 millis"), { until: condition }).pipe(
    Effect.timeoutOrElse({
      duration: "5 seconds",
      orElse: () => Effect.die(new Error(`timed out waiting until ${what}`))
    })
  )

/** Two milliseconds of real time, under the TestClock or not. */
const liveSleep = Effect.clockWith((clock) =>
  "withLive" in clock ? TestClock.withLive(Effect.sleep("2 millis")) : Effect.sleep("2 millis")
)

/**
 * Checks `condition` every 2 ms of real time until it holds, a defect after 3 seconds: for tests
 * on the TestClock that wait for real I/O. `condition` runs with the test's services (its clock).
 */
export const waitUntilEffect = <E, R>(condition: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 3_000
    while (!(yield* condition)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting until ${what}`))
      yield* liveSleep
    }
  })
