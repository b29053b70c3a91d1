/** Recordings made on the `TestClock`, for the report's tests. */
import { Provider, type ProviderRecording } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import type { Report } from "@sluice/report"
import { Data, Duration, Effect, Fiber, TestClock } from "effect"

class TooMany extends Data.TaggedError("TooMany")<{ readonly retryAfter: Duration.Duration }> {}

/**
 * An LLM-like provider: a tokens limit, calls that use more tokens than estimated, and a 429 at
 * 0 s that asks for a 2 s pause; 8 calls of 300 ms through 2 permits.
 */
export const recordedRun: Effect.Effect<ProviderRecording.Recording> = Effect.scoped(Effect.gen(function*() {
  let first = true
  const provider = yield* Provider.make({
    name: "llm",
    bulkhead: { permits: 2 },
    rateLimiter: {
      limits: [
        { dimension: "requests", limit: 4, window: "1 second" },
        { dimension: "tokens", limit: 2_000, window: "1 second", algorithm: "fixed-window" }
      ]
    },
    retry: { maxAttempts: 2, backoff: { initial: "100 millis", jitter: 0 }, isRetryable: (e) => e instanceof TooMany },
    isUpstreamError: (e) => e instanceof TooMany,
    recording: { bucket: "500 millis" }
  })
  const work = Effect.suspend(() => {
    if (!first) return Effect.sleep("300 millis")
    first = false
    return Effect.fail(new TooMany({ retryAfter: Duration.seconds(2) }))
  })
  const fiber = yield* Effect.fork(Effect.forEach(
    Array.from({ length: 8 }, (_, i) => i),
    () => Effect.either(provider.call(work, { cost: { requests: 1, tokens: 200 }, usage: () => ({ tokens: 260 }) })),
    { concurrency: "unbounded", discard: true }
  ))
  yield* TestClock.adjust("30 seconds")
  yield* Fiber.join(fiber)
  const recording = yield* provider.recording
  if (recording === undefined) return yield* Effect.die("no recording")
  return recording
})).pipe(Effect.provide(RateLimiterStore.layerMemory))

/**
 * A geocoder-like provider named like a closing tag: 40 calls of 200 ms through 4 permits at
 * 10/s, beside the server's arrivals; and the LLM-like run. The input of the browser's test.
 */
export const twoProviders: Effect.Effect<Report.Input> = Effect.gen(function*() {
  const geocoder = yield* Effect.scoped(Effect.gen(function*() {
    const provider = yield* Provider.make({
      name: "</script><b>geo</b>",
      bulkhead: { permits: 4 },
      rateLimiter: { limit: 10, window: "1 second" },
      recording: { bucket: "500 millis" }
    })
    const fiber = yield* Effect.fork(Effect.forEach(
      Array.from({ length: 40 }, (_, i) => i),
      () => Effect.orDie(provider.call(Effect.sleep("200 millis"))),
      { concurrency: "unbounded", discard: true }
    ))
    yield* TestClock.adjust("30 seconds")
    yield* Fiber.join(fiber)
    const recording = yield* provider.recording
    const stats = yield* provider.stats
    if (recording === undefined) return yield* Effect.die("no recording")
    return { recording, verdict: stats.verdict }
  })).pipe(Effect.provide(RateLimiterStore.layerMemory))
  const llm = yield* recordedRun
  const arrivals = {
    startMillis: geocoder.recording.startMillis ?? 0,
    bucketMillis: 1000,
    counts: geocoder.recording.starts.reduce<Array<number>>((acc, n, i) => {
      acc[Math.floor(i / 2)] = (acc[Math.floor(i / 2)] ?? 0) + n
      return acc
    }, [])
  }
  return {
    title: "sluice run report <test>",
    notes: ["two providers on the TestClock"],
    providers: [
      {
        ...geocoder,
        quotaPerSecond: 11,
        server: { requests: 40, rateLimited: 0, peakInWindow: 11, admitsPerWindow: 11, arrivals }
      },
      { recording: llm, verdict: { binding: "upstream", reason: "1 of 9 attempts met upstream pushback (429/5xx)" } }
    ]
  }
})
