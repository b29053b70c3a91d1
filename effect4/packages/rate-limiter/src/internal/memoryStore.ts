/** @internal */
import { MemoryStore } from "@sluice/core/MemoryStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as RateLimiterStore from "../RateLimiterStore.js"

/** @internal */
export const nowMillis = (clock: Clock.Clock): number => Number(clock.currentTimeNanosUnsafe()) / 1_000_000

/**
 * The memory store: `@sluice/core/MemoryStore` decides, at the time `clock` reads; this binding
 * wraps each decision in its effect and logs the observations it ignores.
 *
 * @internal
 */
export const makeMemoryUnsafe = (clock: Clock.Clock): RateLimiterStore.Service => {
  const store = new MemoryStore()
  return {
    reserve: (request) => Effect.sync(() => store.reserve(request, nowMillis(clock))),
    refund: (request) => Effect.sync(() => store.refund(request, nowMillis(clock))),
    settle: (request) => Effect.sync(() => store.settle(request, nowMillis(clock))),
    tighten: (request) =>
      Effect.suspend(() => {
        const { ignored, usable } = RateLimiterStore.usableObservations(request)
        store.tighten(request.key, request.limits, usable, nowMillis(clock))
        return ignored === undefined ? Effect.void : Effect.logWarning(`rate limiter memory store: ${ignored}`)
      }),
    pause: (key, millis) => Effect.sync(() => store.pause(key, millis, nowMillis(clock))),
    readPause: (key) => Effect.sync(() => store.readPause(key, nowMillis(clock)))
  }
}

/** @internal */
export const makeMemory: Effect.Effect<RateLimiterStore.Service> = Clock.clockWith((clock) =>
  Effect.succeed(makeMemoryUnsafe(clock))
)
