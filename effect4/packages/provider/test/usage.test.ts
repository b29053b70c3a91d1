/**
 * Reserve, then settle, per attempt: each step of a call leaves the limiter's books right. The
 * limiter counts tokens in a fixed window of 1,000 per minute, so that what it holds is read
 * exactly: the room left is the largest reservation that need not wait.
 */
import { assert, describe, it } from "@effect/vitest"
import { Provider, ProviderStats } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Deferred, Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { room, uniqueName, yieldTurns } from "./utils.js"

const make = (
  options: { readonly totalTimeout?: Duration.Input; readonly attemptTimeout?: Duration.Input } = {}
) =>
  Provider.make({
    name: uniqueName("usage"),
    bulkhead: { permits: 2 },
    rateLimiter: {
      limits: [
        { dimension: "requests", limit: 100, window: "1 minute", burst: 100 },
        { dimension: "tokens", limit: 1000, window: "1 minute", algorithm: "fixed-window" }
      ]
    },
    ...options
  })

const estimate = { requests: 1, tokens: 300 } as const

/** 800 of the window's 1,000 tokens taken, then a call of 300 that waits for the next window. */
const waitingInTheLimiter = <Err>(provider: Provider.Provider<Err>) =>
  Effect.gen(function*() {
    yield* (provider.rateLimiter as RateLimiter.RateLimiter).take({ cost: { tokens: 800 } })
    const asked: Array<unknown> = []
    const fiber = yield* Effect.forkChild(provider.call(Effect.void, {
      cost: estimate,
      usage: (exit) => {
        asked.push(exit)
        return undefined
      }
    }))
    yield* yieldTurns()
    return { asked, fiber }
  })

describe("reserve, then settle, per attempt", () => {
  it.effect("the usage is read inside the permit, and settles the estimate", () =>
    Effect.gen(function*() {
      const provider = yield* make()
      const inside: Array<number> = []
      const value = yield* provider.call(Effect.succeed("answer"), {
        cost: estimate,
        usage: (exit) => {
          inside.push(Effect.runSync(provider.bulkhead.stats).inFlight)
          assert.deepStrictEqual(exit, Exit.succeed("answer"))
          return { tokens: 120 }
        }
      })
      assert.strictEqual(value, "answer")
      assert.deepStrictEqual(inside, [1])
      assert.strictEqual(yield* room(provider), 880)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("more than estimated: the debt is charged, later starts pay it", () =>
    Effect.gen(function*() {
      const provider = yield* make()
      yield* provider.call(Effect.void, { cost: estimate, usage: () => ({ tokens: 900 }) })
      assert.strictEqual(yield* room(provider), 100)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("undefined keeps the estimate; \"release\" gives it all back; the call's own error is what usage reads", () =>
    Effect.gen(function*() {
      const provider = yield* make()
      yield* provider.call(Effect.void, { cost: estimate, usage: () => undefined })
      assert.strictEqual(yield* room(provider), 700)
      const seen: Array<unknown> = []
      yield* Effect.flip(provider.call(Effect.fail("refused"), {
        cost: estimate,
        retry: false,
        usage: (exit) => {
          seen.push(exit)
          return "release"
        }
      }))
      // the failure's value: Effect 4 annotates the cause with the span it failed in
      assert.deepStrictEqual(
        seen.map((exit) => Exit.isExit(exit) && Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit),
        ["refused"]
      )
      assert.strictEqual(yield* room(provider), 700)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("a usage function that throws is logged and keeps the estimate", () =>
    Effect.gen(function*() {
      const provider = yield* make()
      yield* provider.call(Effect.void, {
        cost: estimate,
        usage: () => {
          throw new Error("no usage field")
        }
      })
      assert.strictEqual(yield* room(provider), 700)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("interrupted while waiting in the limiter: nothing is left reserved", () =>
    Effect.gen(function*() {
      const provider = yield* make()
      const { asked, fiber } = yield* waitingInTheLimiter(provider)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(asked, [])
      assert.strictEqual(yield* room(provider), 200)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("the total budget runs out in the limiter: the call never started, released", () =>
    Effect.gen(function*() {
      // the window reopens exactly when the total runs out: reserved, then too late to call
      const provider = yield* make({ totalTimeout: "1 minute" })
      const { asked, fiber } = yield* waitingInTheLimiter(provider)
      yield* TestClock.adjust("1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "TotalTimeout")
      assert.deepStrictEqual(asked, [])
      // in the new window, all of it: the reservation was given back
      assert.strictEqual(yield* room(provider), 1000)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("interrupted in the call (the attempt budget): the upstream may have counted it, usage reads the interruption", () =>
    Effect.gen(function*() {
      const provider = yield* make({ attemptTimeout: "5 seconds" })
      const inCall = yield* Deferred.make<void>()
      const asked: Array<boolean> = []
      const fiber = yield* Effect.forkChild(
        provider.call(Effect.andThen(Deferred.succeed(inCall, undefined), Effect.never), {
          cost: estimate,
          retry: false,
          usage: (exit) => {
            asked.push(Exit.hasInterrupts(exit))
            return undefined
          }
        })
      )
      yield* Deferred.await(inCall)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "CallTimeout")
      assert.deepStrictEqual(asked, [true])
      assert.strictEqual(yield* room(provider), 700)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("each retried attempt reserves and settles its own", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("usage-retry"),
        bulkhead: { permits: 1 },
        rateLimiter: { limits: [{ dimension: "tokens", limit: 1000, window: "1 minute", algorithm: "fixed-window" }] },
        retry: { maxAttempts: 2, backoff: { initial: "1 millis", jitter: 0 }, isRetryable: () => true }
      })
      let attempts = 0
      const fiber = yield* Effect.forkChild(provider.call(
        Effect.suspend(() => ++attempts === 1 ? Effect.fail("busy") : Effect.void),
        {
          cost: { tokens: 300 },
          usage: (exit) => Exit.isSuccess(exit) ? { tokens: 50 } : "release"
        }
      ))
      yield* yieldTurns()
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.strictEqual(attempts, 2)
      // the first attempt released its 300, the second used 50
      assert.strictEqual(yield* room(provider), 950)
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))
})

describe("the verdict names the binding dimension", () => {
  const phases = (mean: number) => ({ count: 100, meanMillis: mean, p95Millis: mean })

  it("a limiter verdict of a limiter with dimensions names the limit used nearest its rate", () => {
    const verdict = ProviderStats.verdict({
      attempts: 100,
      upstreamErrors: 0,
      permitWait: phases(900),
      limiterWait: phases(900),
      callTime: phases(100),
      dimensions: [
        { dimension: "requests", limit: 500, window: Duration.minutes(1), ratePerSecond: 2 },
        { dimension: "tokens", limit: 200_000, window: Duration.minutes(1), ratePerSecond: 3_250 },
        { dimension: "tokens", limit: 2_000_000, window: Duration.days(1), ratePerSecond: 3_250, spanMillis: 300_000 }
      ]
    })
    assert.strictEqual(verdict.binding, "limiter")
    assert.strictEqual(verdict.dimension, "tokens/min")
    assert.strictEqual(
      verdict.reason,
      "tokens/min saturated: tokens used at 98 % of 200000 per 60 s lately (permits held 90 % asleep in the " +
        "limiter, mean 900 ms of 1 s): the healthy state for a batch; more quota or a second provider helps, " +
        "more permits do not"
    )
  })

  it("a limit used far below its rate is not called saturated, however long the limiter sleeps", () => {
    // a small run: most calls refused by the limiter, the rest asleep in it; 2 % of the quota used
    const verdict = ProviderStats.verdict({
      attempts: 20,
      upstreamErrors: 0,
      permitWait: phases(10),
      limiterWait: phases(900),
      callTime: phases(100),
      dimensions: [{ dimension: "requests", limit: 600, window: Duration.minutes(1), ratePerSecond: 0.2 }]
    })
    assert.strictEqual(verdict.binding, "limiter")
    assert.strictEqual(
      verdict.reason,
      "the limiter paces the calls below its quota: requests used at 2 % of 600 per 60 s lately (permits held " +
        "90 % asleep in the limiter, mean 900 ms of 1 s): a larger burst or limit helps, more permits do not"
    )
    assert.notMatch(verdict.reason, /saturated|healthy/)
  })

  it("without dimensions the verdict reads the start rate against the limiter's, or says saturated", () => {
    const verdict = (startRate?: number) =>
      ProviderStats.verdict({
        attempts: 100,
        upstreamErrors: 0,
        permitWait: phases(900),
        limiterWait: phases(900),
        callTime: phases(100),
        startRate,
        limiterRate: startRate === undefined ? undefined : 10
      })
    assert.strictEqual(verdict().dimension, undefined)
    assert.match(verdict().reason, /^the quota is saturated: permits held 90 % asleep in the limiter/)
    assert.match(verdict(9.4).reason, /^the quota is saturated: calls started at 9.4\/s, 94 % of the limiter's 10\/s/)
    assert.match(verdict(2).reason, /^the limiter paces the calls below its quota: calls started at 2\/s, 20 %/)
  })

  it.effect("a provider's stats name the dimension its calls use up", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("usage-verdict"),
        bulkhead: { permits: 1 },
        rateLimiter: {
          limits: [
            { dimension: "requests", limit: 100, window: "1 minute", burst: 100 },
            { dimension: "tokens", limit: 1000, window: "1 minute", burst: 1000 }
          ]
        }
      })
      // 100 tokens a call against 1,000 a minute: after the first ten, a call every 6 s
      const calls = Effect.forEach(
        Array.from({ length: 20 }),
        () => provider.call(Effect.sleep("1 second"), { cost: { requests: 1, tokens: 100 } }),
        { concurrency: "unbounded", discard: true }
      )
      const fiber = yield* Effect.forkChild(calls)
      for (let i = 0; i < 20; i++) {
        yield* yieldTurns()
        yield* TestClock.adjust("10 seconds")
      }
      yield* Fiber.join(fiber)
      const { verdict } = yield* provider.stats
      assert.strictEqual(verdict.binding, "limiter")
      assert.strictEqual(verdict.dimension, "tokens/min")
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory)))
})
