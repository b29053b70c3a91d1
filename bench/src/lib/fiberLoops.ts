/**
 * `inFlight` fibers, each acquiring again as soon as the previous acquire returns, for `millis`;
 * answers how many acquires completed (`started` is called after each).
 */
import * as Effect from "effect/Effect"

export const fiberLoops =
  (inFlight: number) => <E>(acquire: Effect.Effect<unknown, E>) => (millis: number, started?: () => void) =>
    Effect.suspend(() => {
      const deadline = performance.now() + millis
      let count = 0
      const worker = Effect.whileLoop({
        while: () => performance.now() < deadline,
        body: () => Effect.orDie(acquire),
        step: () => {
          count++
          started?.()
        }
      })
      return Effect.zipRight(
        Effect.all(Array.from({ length: inFlight }, () => worker), { concurrency: "unbounded", discard: true }),
        Effect.sync(() => count)
      )
    })
