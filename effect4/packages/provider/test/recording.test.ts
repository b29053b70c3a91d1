import { assert, describe, it } from "@effect/vitest"
import { Provider, ProviderRecording } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Data, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { uniqueName, yieldTurns } from "./utils.js"

const memory = Effect.provide(RateLimiterStore.layerMemory)

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

/** `n` calls at once through `provider`, each running `work`, the clock moved `by` after they queue. */
const batch = <E>(
  provider: Provider.Provider<E>,
  n: number,
  work: Effect.Effect<unknown, unknown>,
  by: Duration.Input
) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(
      Effect.forEach(Array.from({ length: n }, (_, i) => i), () => Effect.result(provider.call(work)), {
        concurrency: "unbounded",
        discard: true
      })
    )
    yield* yieldTurns()
    yield* TestClock.adjust(by)
    yield* Fiber.join(fiber)
  })

class TooMany extends Data.TaggedError("TooMany")<{ readonly retryAfter: Duration.Duration }> {}

describe("recording", () => {
  it.effect("off by default: no recording", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("unrecorded"), bulkhead: { permits: 1 } })
      yield* provider.call(Effect.void)
      assert.isUndefined(yield* provider.recording)
    }))

  it.effect("starts, waits, permits held and outcomes at the instants the run had them", () =>
    Effect.gen(function*() {
      // 2 permits, 6 calls of 500 ms: pairs start at 0, 0.5 and 1 s and end at 0.5, 1 and 1.5 s
      const provider = yield* Provider.make({
        name: uniqueName("recorded"),
        bulkhead: { permits: 2 },
        recording: true
      })
      yield* batch(provider, 6, Effect.sleep("500 millis"), "2 seconds")
      const recording = yield* provider.recording
      assert.isDefined(recording)
      if (recording === undefined) return
      assert.strictEqual(recording.startMillis, 0)
      assert.strictEqual(recording.bucketMillis, 1000)
      assert.strictEqual(recording.permits, 2)
      assert.deepStrictEqual(recording.starts, [4, 2])
      assert.deepStrictEqual(ProviderRecording.perSecond(recording, recording.starts), [4, 2])
      // waits by their grant: 0, 0, 500, 500 in the first second; 1000, 1000 at 1 s
      assert.deepStrictEqual(recording.permitWait.count, [4, 2])
      assert.deepStrictEqual(recording.permitWait.meanMillis, [250, 1000])
      assert.deepStrictEqual(recording.permitWait.maxMillis, [500, 1000])
      assert.deepStrictEqual(recording.limiterWait.count, [0, 0])
      // both permits held all of the first second, half of the second
      assert.deepStrictEqual(recording.permitsHeld.mean, [2, 1])
      assert.deepStrictEqual(recording.permitsHeld.max, [2, 2])
      assert.deepStrictEqual(recording.callTime.meanMillis, [500, 500])
      assert.deepStrictEqual(recording.outcomes.success, [2, 4])
      assert.deepStrictEqual(recording.retries, [0, 0])
      const { permitWait } = recording.histograms
      // 0 ms twice, 500 ms in (256, 512] twice, 1000 ms in (512, 1024] twice
      assert.strictEqual(permitWait.counts[0], 2)
      assert.strictEqual(permitWait.counts[permitWait.boundsMillis.indexOf(512)], 2)
      assert.strictEqual(permitWait.counts[permitWait.boundsMillis.indexOf(1024)], 2)
      assert.strictEqual(sum(permitWait.counts), 6)
    }))

  it.effect("limiter wait, a 429's retry and its pause on the time axis", () =>
    Effect.gen(function*() {
      let first = true
      const provider = yield* Provider.make({
        name: uniqueName("pushed-back"),
        bulkhead: { permits: 4 },
        rateLimiter: { limit: 2, window: "1 second" },
        retry: {
          maxAttempts: 2,
          backoff: { initial: "100 millis", jitter: 0 },
          isRetryable: (error) => error instanceof TooMany
        },
        isUpstreamError: (error) => error instanceof TooMany,
        recording: { bucket: "500 millis" }
      })
      const work = Effect.suspend(() => {
        if (!first) return Effect.void
        first = false
        return Effect.fail(new TooMany({ retryAfter: Duration.seconds(2) }))
      })
      yield* batch(provider, 4, work, "5 seconds")
      const recording = yield* provider.recording
      if (recording === undefined) return assert.fail("no recording")
      assert.strictEqual(recording.limiterRate, 2)
      assert.strictEqual(sum(recording.starts), 5) // 4 calls, one of them twice
      assert.strictEqual(sum(recording.retries), 1)
      // the 429 at 0, counted and its 2 s pause with it, in the first bucket
      assert.strictEqual(recording.upstreamErrors[0], 1)
      assert.strictEqual(recording.pauses[0], 1)
      assert.strictEqual(recording.pausedMillis[0], 2000)
      assert.strictEqual(sum(recording.upstreamErrors), 1)
      assert.isAbove(sum(recording.limiterWait.count), 0)
      assert.isAbove(Math.max(...recording.limiterWait.maxMillis), 0)
      assert.strictEqual(sum(recording.outcomes.success ?? []), 4)
    }).pipe(memory))

  it.effect("memory flat on a long run: buckets merge, the counts kept", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("long-run"),
        bulkhead: { permits: 1 },
        recording: { bucket: "100 millis", maxBuckets: 4 }
      })
      // one call of 100 ms after another for 1 s: 10 starts
      const fiber = yield* Effect.forkChild(Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        () => provider.call(Effect.sleep("100 millis")),
        { discard: true }
      ))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      const recording = yield* provider.recording
      if (recording === undefined) return assert.fail("no recording")
      // 100 → 200 → 400 ms: the last end, at 1 s, falls in bucket 2 of 4
      assert.strictEqual(recording.bucketMillis, 400)
      assert.strictEqual(recording.buckets, 3)
      assert.deepStrictEqual(recording.starts, [4, 4, 2])
      assert.deepStrictEqual(recording.permitsHeld.mean, [1, 1, 0.5])
      assert.strictEqual(sum(recording.outcomes.success ?? []), 10)
    }))

  it.effect("each dimension's use, estimates and corrections", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("tokens"),
        bulkhead: { permits: 2 },
        rateLimiter: {
          limits: [{ dimension: "tokens", limit: 10_000, window: "1 minute", algorithm: "fixed-window" }]
        },
        recording: true
      })
      yield* provider.call(Effect.void, { cost: { tokens: 100 }, usage: () => ({ tokens: 160 }) })
      yield* TestClock.adjust("1 second")
      yield* provider.call(Effect.void, { cost: { tokens: 100 }, usage: () => ({ tokens: 40 }) })
      const recording = yield* provider.recording
      if (recording === undefined) return assert.fail("no recording")
      assert.deepStrictEqual(recording.dimensions, [{
        dimension: "tokens",
        limit: 10_000,
        windowMillis: 60_000,
        units: [160, 40],
        estimated: 200,
        corrected: 0,
        misestimated: 120
      }])
    }).pipe(memory))
})
