import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { ConfigProvider, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { now, uniqueName, yieldTurns } from "./utils.js"

const memory = Effect.provide(RateLimiterStore.layerMemory)

/** `n` calls at once through `provider`, each running `work`. */
const batch = <A, E>(provider: Provider.Provider<E>, n: number, work: Effect.Effect<A>) =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), () => provider.call(work), {
    concurrency: "unbounded",
    discard: true
  })

describe("verdict", () => {
  it.effect("a quota-bound batch: permit wait rises too, but permits are held asleep in the limiter → limiter", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("quota-bound"),
        bulkhead: { permits: 4 },
        rateLimiter: { limit: 10, window: "1 second" }
      })
      const fiber = yield* Effect.forkChild(batch(provider, 40, Effect.sleep("50 millis")))
      yield* yieldTurns()
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      const stats = yield* provider.stats
      assert.strictEqual(stats.outcomes.success, 40)
      assert.strictEqual(stats.callTime.meanMillis, 50)
      assert.isAbove(stats.permitWait.meanMillis, 1000) // callers queue for permits as well
      assert.isAbove(stats.limiterWait.meanMillis, 250)
      assert.isAtLeast(stats.permitWait.p95Millis, stats.permitWait.meanMillis)
      assert.strictEqual(stats.verdict.binding, "limiter")
      assert.match(stats.verdict.reason, /asleep in the limiter/)
    }).pipe(memory))

  it.effect("calls starting at the limiter's rate → limiter, though the call holds the permits longer", () =>
    Effect.gen(function*() {
      // 3 permits × 200 ms calls could carry 15/s; the limiter allows 10/s (burst 3): each permit is
      // held about 300 ms, 200 of them by the call, and callers queue for permits
      const provider = yield* Provider.make({
        name: uniqueName("rate-bound"),
        bulkhead: { permits: 3 },
        rateLimiter: { limit: 10, window: "1 second", burst: 3 }
      })
      const fiber = yield* Effect.forkChild(batch(provider, 60, Effect.sleep("200 millis")))
      yield* yieldTurns()
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      const stats = yield* provider.stats
      assert.isBelow(stats.limiterWait.meanMillis, stats.callTime.meanMillis) // the split alone says "the call"
      assert.isAbove(stats.permitWait.meanMillis, 1000)
      assert.strictEqual(stats.verdict.binding, "limiter")
      assert.match(stats.verdict.reason, /of the limiter's 10\/s/)
    }).pipe(memory))

  it.effect("a latency-bound batch: permits held by slow calls while callers queue → bulkhead", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("latency-bound"),
        bulkhead: { permits: 2 },
        rateLimiter: { limit: 1000, window: "1 second", burst: 1000 }
      })
      const fiber = yield* Effect.forkChild(batch(provider, 20, Effect.sleep("1 second")))
      yield* yieldTurns()
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      const stats = yield* provider.stats
      // waits 0, 0, 1, 1, ... 9, 9 seconds
      assert.strictEqual(stats.permitWait.meanMillis, 4500)
      assert.strictEqual(stats.permitWait.p95Millis, 9000)
      assert.strictEqual(stats.limiterWait.meanMillis, 0)
      assert.strictEqual(stats.callTime.meanMillis, 1000)
      assert.strictEqual(stats.verdict.binding, "bulkhead")
    }).pipe(memory))

  it.effect("429s from the upstream → upstream; no waiting → none", () =>
    Effect.gen(function*() {
      class TooManyRequests {
        readonly _tag = "TooManyRequests"
      }
      const provider = yield* Provider.make({
        name: uniqueName("upstream"),
        bulkhead: { permits: 8 },
        isUpstreamError: (e) => e instanceof TooManyRequests
      })
      // as many calls as permits: nobody waits
      const fiber = yield* Effect.forkChild(batch(provider, 8, Effect.sleep("10 millis")))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.strictEqual((yield* provider.stats).verdict.binding, "none")
      for (let i = 0; i < 3; i++) yield* Effect.exit(provider.call(Effect.fail(new TooManyRequests())))
      const stats = yield* provider.stats
      assert.strictEqual(stats.upstreamErrors, 3)
      assert.strictEqual(stats.outcomes.call_error, 3)
      assert.strictEqual(stats.verdict.binding, "upstream")
    }))

  it("the verdict function reads the split of permit-holding time", () => {
    const phase = (meanMillis: number) => ({ count: 10, meanMillis, p95Millis: meanMillis })
    const v = (permit: number, limiter: number, call: number, upstream = 0) =>
      Provider.verdict({
        attempts: 100,
        upstreamErrors: upstream,
        permitWait: phase(permit),
        limiterWait: phase(limiter),
        callTime: phase(call)
      }).binding
    assert.strictEqual(v(900, 300, 100), "limiter")
    assert.strictEqual(v(900, 10, 500), "bulkhead")
    assert.strictEqual(v(1, 10, 500), "none")
    assert.strictEqual(v(900, 300, 100, 5), "upstream")
    assert.strictEqual(v(900, 300, 100, 4), "limiter") // 4 % pushback is noise
    // calls starting at 90 % or more of the limiter's rate: the quota binds, whatever the split
    const r = (startRate: number, limiterRate: number | undefined, upstream = 0) =>
      Provider.verdict({
        attempts: 100,
        upstreamErrors: upstream,
        permitWait: phase(900),
        limiterWait: phase(10),
        callTime: phase(500),
        startRate,
        limiterRate
      }).binding
    assert.strictEqual(r(95, 100), "limiter")
    assert.strictEqual(r(90, 100), "limiter")
    assert.strictEqual(r(85, 100), "bulkhead")
    assert.strictEqual(r(95, undefined), "bulkhead") // no limiter, no quota
    assert.strictEqual(r(95, 100, 5), "upstream")
    // fewer than 20 attempts: too little data to tell the waits apart, and the verdict says so
    const few = Provider.verdict({
      attempts: 10,
      upstreamErrors: 0,
      permitWait: phase(900),
      limiterWait: phase(300),
      callTime: phase(100)
    })
    assert.strictEqual(few.binding, "none")
    assert.match(few.reason, /^too little data to judge: 10 attempts, fewer than the 20 a verdict needs \(permit wait/)
    // pushback is a fact at any count
    assert.strictEqual(
      Provider.verdict({
        attempts: 10,
        upstreamErrors: 2,
        permitWait: phase(900),
        limiterWait: phase(300),
        callTime: phase(100)
      }).binding,
      "upstream"
    )
    assert.strictEqual(
      Provider.verdict({
        attempts: 0,
        upstreamErrors: 0,
        permitWait: phase(0),
        limiterWait: phase(0),
        callTime: phase(0)
      }).binding,
      "none"
    )
  })
})

describe("isolation", () => {
  it.effect("a provider whose calls hang leaves another provider's calls completing exactly on schedule", () =>
    Effect.gen(function*() {
      const stuck = yield* Provider.make({ name: uniqueName("stuck"), bulkhead: { permits: 2 } })
      const healthy = yield* Provider.make({ name: uniqueName("healthy"), bulkhead: { permits: 2 } })
      const hung = yield* Effect.forEach([1, 2, 3, 4, 5], () => Effect.forkChild(stuck.call(Effect.never)))
      yield* yieldTurns()
      assert.deepInclude(yield* stuck.bulkhead.stats, { inFlight: 2, waiting: 3 })
      const done = yield* Effect.forkChild(
        Effect.forEach([1, 2, 3, 4], () => healthy.call(Effect.andThen(Effect.sleep("100 millis"), now)), {
          concurrency: "unbounded"
        })
      )
      yield* yieldTurns()
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(yield* Fiber.join(done), [100, 100, 200, 200])
      yield* Fiber.interruptAll(hung)
    }))
})

class SharedGeo extends Provider.Tag("shared-geo")<SharedGeo>() {}

describe("layers", () => {
  /** A batch through the `SharedGeo` service, counting the peak of calls running at once. */
  const geoBatch = (gauge: { live: number; peak: number }) =>
    Effect.flatMap(SharedGeo, (geo) =>
      batch(
        geo,
        10,
        Effect.acquireUseRelease(
          Effect.sync(() => {
            gauge.live++
            gauge.peak = Math.max(gauge.peak, gauge.live)
          }),
          () => Effect.sleep("100 millis"),
          () => Effect.sync(() => gauge.live--)
        )
      ))

  it.effect("two batches in one runtime using one provider layer share one bound", () =>
    Effect.gen(function*() {
      const gauge = { live: 0, peak: 0 }
      const fiber = yield* Effect.forkChild(
        Effect.all([geoBatch(gauge), geoBatch(gauge)], { concurrency: "unbounded" }).pipe(
          Effect.provide(SharedGeo.layer({ bulkhead: { permits: 3 } }))
        )
      )
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.strictEqual(gauge.peak, 3)
      assert.strictEqual(SharedGeo.key, "@sluice/provider/shared-geo")
    }))

  it.effect("layerConfig reads the settings from Config and names the provider by the tag's id", () =>
    Effect.gen(function*() {
      class FromConfig extends Provider.Tag("from-config")<FromConfig>() {}
      const layer = FromConfig.layerConfig(Provider.config).pipe(Layer.provide(RateLimiterStore.layerMemory))
      const program = Effect.gen(function*() {
        const provider = yield* FromConfig
        assert.strictEqual(provider.name, "from-config")
        assert.isDefined(provider.rateLimiter)
        assert.strictEqual((yield* provider.bulkhead.stats).permits, 3)
        const fiber = yield* Effect.forkChild(Effect.flip(provider.call(Effect.never)))
        yield* yieldTurns()
        yield* TestClock.adjust("2 seconds")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(layer))
      const error = yield* program.pipe(
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({
            env: {
              BULKHEAD_PERMITS: "3",
              RATE_LIMIT_LIMIT: "5",
              RATE_LIMIT_WINDOW: "1 second",
              ATTEMPT_TIMEOUT: "2 seconds",
              GRACE_PERIOD: "0 millis"
            }
          })
        )
      )
      assert.strictEqual(error._tag, "CallTimeout")
    }))
})
