/**
 * Redis loses the limiter's state mid-run (FLUSHALL, or a restart without persistence) while this
 * process's pacer still counts the starts it let through: the two disagree, and `maxWait` must
 * still bound the take. On the client clock under TestClock, so every instant is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@sluice/rate-limiter"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import { Clock, Duration, Effect, Fiber } from "effect"
import { call, inspector, ownServer, store, uniquePrefix } from "./utils.js"

/** Joins `fiber`, or dies when it has not ended within 5 s of real time: it was held. */
const notHeld = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.raceFirst(
    Fiber.join(fiber),
    Effect.andThen(
      Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5000))),
      Effect.die("the take was held")
    )
  )

/** 2 per 10 s in fixed windows, never waiting: one limiter on the key per call. */
const flushed = (s: RateLimiterStore.Service) =>
  RateLimiter.make({ name: "flushed", limit: 2, window: "10 seconds", algorithm: "fixed-window", maxWait: 0, store: s })

describe("Redis flushed in the middle of a run", () => {
  it.effect("a fixed-window take with maxWait 0 is refused at once, not held to the window's end", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const s = yield* store({ url: server.url, prefix: uniquePrefix("flush"), clock: "client" })
      const limiter = yield* flushed(s)
      yield* limiter.take()
      yield* limiter.take()
      const before = yield* Effect.flip(limiter.take())
      assert(before._tag === "RateLimitExceeded")
      assert.deepStrictEqual(before.retryAfter, Duration.seconds(10))

      const redis = yield* inspector(server.url)
      yield* call(() => redis.flushall())
      // Redis admits (it forgot); the pacer knows this process already started 2 in this window
      const error = yield* notHeld(yield* Effect.forkChild(Effect.flip(limiter.take())))
      assert(error._tag === "RateLimitExceeded")
      assert.deepStrictEqual(error.retryAfter, Duration.seconds(10))
      assert.strictEqual(yield* Clock.currentTimeMillis, 0)
      // the reservation Redis made was given back: a fresh window for another process is whole
      const fresh = yield* flushed(s)
      yield* fresh.take()
      yield* fresh.take()
    }))
})
