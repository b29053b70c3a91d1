import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Config, ConfigProvider, Duration, Effect, Exit, Fiber, Layer, Metric, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { defectOf, uniqueName } from "./utils.js"

const make = (options: RateLimiter.Options) =>
  RateLimiter.make(options).pipe(Effect.provide(RateLimiterStore.layerMemory))

const taker = (limiter: RateLimiter.RateLimiter, options?: RateLimiter.TakeOptions) =>
  Effect.forkChild(Effect.andThen(limiter.take(options), Clock.currentTimeMillis))

/** A store that lets everyone start at once, as a buggy store or another process's clock might. */
const permissiveStore: RateLimiterStore.Service = {
  reserve: () => Effect.succeed({ _tag: "Reserved", delayMillis: 0, reservation: 1 }),
  refund: () => Effect.succeed(false),
  settle: () => Effect.void,
  tighten: () => Effect.void,
  pause: () => Effect.void,
  readPause: () => Effect.succeed(0)
}

/** Config read from `entries`, a tree of text. */
const provider = (entries: Record<string, unknown>) => ConfigProvider.fromUnknown(entries)

const withConfig = (entries: Record<string, unknown>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, provider(entries))

/**
 * The test clock, with the sleeps in progress on it recorded (their instants): the limiter sleeps
 * on the clock of the fiber that made it.
 */
const recordingClock = Effect.map(Clock.clockWith(Effect.succeed), (clock) => {
  const sleeping: Array<number> = []
  const recording: Clock.Clock = Object.assign(Object.create(clock) as Clock.Clock, {
    sleep: (duration: Duration.Duration) =>
      Effect.suspend(() => {
        const until = clock.currentTimeMillisUnsafe() + Duration.toMillis(duration)
        sleeping.push(until)
        return Effect.ensuring(
          clock.sleep(duration),
          Effect.sync(() => {
            sleeping.splice(sleeping.indexOf(until), 1)
          })
        )
      })
  })
  return { clock: recording, sleeping }
})

describe("RateLimiter", () => {
  describe("bad input is a defect naming the limiter and the value, never an endless wait", () => {
    const cases: ReadonlyArray<readonly [string, RateLimiter.Settings, string]> = [
      ["limit 0", { limit: 0, window: "1 second" }, "limit must be an integer ≥ 1, got 0"],
      ["limit NaN", { limit: Number.NaN, window: "1 second" }, "limit must be an integer ≥ 1, got NaN"],
      ["limit 2.5", { limit: 2.5, window: "1 second" }, "limit must be an integer ≥ 1, got 2.5"],
      ["window 0", { limit: 1, window: 0 }, "window must be a finite duration > 0, got 0"],
      ["window NaN", { limit: 1, window: Number.NaN }, "window must be a finite duration > 0, got NaN"],
      ["window -5", { limit: 1, window: -5 }, "window must be a finite duration > 0, got -5"],
      [
        "window infinite",
        { limit: 1, window: Duration.infinity },
        "window must be a finite duration > 0, got Infinity"
      ],
      ["burst 0", { limit: 1, window: "1 second", burst: 0 }, "burst must be an integer ≥ 1, got 0"],
      [
        "burst on a window",
        { limit: 5, window: "1 second", algorithm: "fixed-window", burst: 2 },
        "burst applies to gcra only"
      ],
      ["maxWait -1", { limit: 1, window: "1 second", maxWait: -1 }, "maxWait must be a duration ≥ 0, got -1"],
      ["maxWait NaN", { limit: 1, window: "1 second", maxWait: Number.NaN }, "maxWait must be a duration ≥ 0, got NaN"],
      [
        "maxWait \"-5 seconds\"",
        { limit: 1, window: "1 second", maxWait: "-5 seconds" },
        `maxWait must be a duration ≥ 0, got "-5 seconds"`
      ],
      [
        "maxWait \"-1 millis\"",
        { limit: 1, window: "1 second", maxWait: "-1 millis" },
        `maxWait must be a duration ≥ 0, got "-1 millis"`
      ],
      [
        "maxWait [-1, 0]",
        { limit: 1, window: "1 second", maxWait: [-1, 0] },
        "maxWait must be a duration ≥ 0, got [-1, 0]"
      ],
      [
        "maxResetAfter infinite",
        { limit: 1, window: "1 second", maxResetAfter: Duration.infinity },
        "maxResetAfter must be a finite duration ≥ 0, got Infinity"
      ],
      [
        "maxResetAfter -1 among several limits",
        { limits: [{ limit: 1, window: "1 second" }], maxResetAfter: -1 },
        "maxResetAfter must be a finite duration ≥ 0, got -1"
      ],
      [
        "window \"-5 seconds\"",
        { limit: 1, window: "-5 seconds" },
        `window must be a finite duration > 0, got "-5 seconds"`
      ],
      [
        "a bad limit among several",
        { limits: [{ limit: 1, window: "1 second" }, { limit: 1, window: 0 }] },
        "limits[1].window must be a finite duration > 0, got 0"
      ]
    ]
    for (const [label, settings, message] of cases) {
      it.effect(label, () =>
        Effect.gen(function*() {
          const error = yield* defectOf(make({ ...settings, name: "bad" }))
          expect(error).toContain(`rate limiter "bad": ${message}`)
        }))
    }

    it.effect("an empty limits array", () =>
      Effect.gen(function*() {
        const limits = [] as unknown as RateLimiter.MultiLimit["limits"]
        expect(yield* defectOf(make({ name: "bad", limits }))).toContain("limits must hold at least one limit")
      }))

    it.effect("a cost above what the bucket can ever hold fails at once, typed (CostExceedsCapacity)", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: "costly", limit: 10, window: "1 second", burst: 2 })
        const error = yield* Effect.flip(limiter.take({ cost: 3 }))
        assert(error._tag === "CostExceedsCapacity")
        expect(error.message).toBe(
          `rate limiter "costly": cost 3 on dimension "default" exceeds what 10 per 1s (burst 2) can ever hold (2); it would wait forever`
        )
        const window = yield* make({ name: "window", limit: 3, window: "1 minute", algorithm: "sliding-window" })
        const windowError = yield* Effect.flip(window.take({ cost: 4 }))
        expect(windowError.message).toContain("3 per 1min (sliding window) can ever hold (3)")
      }))

    it.effect("a bad cost or maxWait of a take", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: "costly", limit: 10, window: "1 second", burst: 2 })
        expect(yield* defectOf(limiter.take({ cost: 0 }))).toContain("cost must be an integer ≥ 1, got 0")
        expect(yield* defectOf(limiter.take({ cost: Number.NaN }))).toContain("got NaN")
        expect(yield* defectOf(limiter.take({ maxWait: Number.NaN }))).toContain(
          "maxWait must be a duration ≥ 0, got NaN"
        )
        expect(yield* defectOf(limiter.take({ maxWait: "-5 seconds" }))).toContain(
          `maxWait must be a duration ≥ 0, got "-5 seconds"`
        )
        expect(yield* defectOf(limiter.take({ maxWait: "-1 millis" }))).toContain(
          `maxWait must be a duration ≥ 0, got "-1 millis"`
        )
        expect(yield* defectOf(limiter.take({ maxWait: [-1, 0] }))).toContain(
          "maxWait must be a duration ≥ 0, got [-1, 0]"
        )
      }))

    it.effect("a bad pause", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: "paused", limit: 1, window: "1 second" })
        expect(yield* defectOf(limiter.pauseFor(Number.NaN))).toContain(
          `"paused": pause must be a finite duration ≥ 0, got NaN`
        )
        expect(yield* defectOf(limiter.pauseFor(-1))).toContain("pause must be a finite duration ≥ 0, got -1")
        expect(yield* defectOf(limiter.pauseFor("-5 seconds"))).toContain(
          `pause must be a finite duration ≥ 0, got "-5 seconds"`
        )
        expect(yield* defectOf(limiter.pauseFor("-1 millis"))).toContain(
          `pause must be a finite duration ≥ 0, got "-1 millis"`
        )
        expect(yield* defectOf(limiter.pauseFor([-1, 0]))).toContain("pause must be a finite duration ≥ 0, got [-1, 0]")
        expect(yield* defectOf(limiter.pauseFor(Duration.infinity))).toContain(
          "pause must be a finite duration ≥ 0, got Infinity"
        )
      }))
  })

  describe("the pacer holds actual starts to the limits", () => {
    it.effect("even when the store lets everyone start at once", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({
          name: "paced",
          limit: 10,
          window: "1 second",
          burst: 2,
          store: permissiveStore
        })
        const fibers = yield* Effect.forEach(Array.from({ length: 5 }), () => taker(limiter))
        yield* TestClock.adjust("1 second")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([0, 0, 100, 200, 300])
      }))

    it.effect("by every limit, windows included", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(300)
        const limiter = yield* RateLimiter.make({
          name: "paced-window",
          limits: [{ limit: 2, window: "1 second", algorithm: "fixed-window" }, {
            limit: 100,
            window: "1 second",
            burst: 100
          }],
          store: permissiveStore
        })
        const fibers = yield* Effect.forEach(Array.from({ length: 5 }), () => taker(limiter))
        yield* TestClock.adjust("2 seconds")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([300, 300, 1000, 1000, 2000])
      }))

    it.effect("late callers queue in order; an interrupted head hands its turn on", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({
          name: "queue-head",
          limit: 10,
          window: "1 second",
          store: permissiveStore
        })
        const fibers = yield* Effect.forEach(Array.from({ length: 4 }), () => taker(limiter))
        yield* TestClock.adjust("50 millis")
        // the first started at once; the second heads the queue, asleep until 100 ms
        assert.isDefined(fibers[0].pollUnsafe())
        yield* Fiber.interrupt(fibers[1])
        yield* TestClock.adjust("1 second")
        expect(yield* Effect.forEach([fibers[0], fibers[2], fibers[3]], Fiber.join)).toEqual([0, 100, 200])
      }))

    it.effect("an interrupted caller in the middle of the queue leaves it", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({
          name: "queue-middle",
          limit: 10,
          window: "1 second",
          store: permissiveStore
        })
        const fibers = yield* Effect.forEach(Array.from({ length: 4 }), () => taker(limiter))
        yield* TestClock.adjust("50 millis")
        yield* Fiber.interrupt(fibers[2])
        yield* TestClock.adjust("1 second")
        expect(yield* Effect.forEach([fibers[0], fibers[1], fibers[3]], Fiber.join)).toEqual([0, 100, 200])
      }))

    it.effect("holds callers that wake during a pause, then paces them", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({
          name: "queue-pause",
          limit: 10,
          window: "1 second",
          burst: 2,
          store: permissiveStore
        })
        yield* limiter.pauseFor("1 second")
        const fibers = yield* Effect.forEach(Array.from({ length: 4 }), () => taker(limiter))
        yield* TestClock.adjust("2 seconds")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([1000, 1000, 1100, 1200])
      }))
  })

  describe("maxWait bounds the whole wait, store decision and pacer together", () => {
    /** A store that admits everything at once (one that lost its state) and records refunds. */
    const forgetfulStore = (refunds: Array<number>): RateLimiterStore.Service => {
      let id = 0
      return {
        ...permissiveStore,
        reserve: () => Effect.sync(() => ({ _tag: "Reserved", delayMillis: 0, reservation: ++id })),
        refund: (request) =>
          Effect.sync(() => {
            refunds.push(request.reservation)
            return true
          })
      }
    }

    it.effect("a take the pacer would hold to the window's end fails at once with maxWait 0", () =>
      Effect.gen(function*() {
        const refunds: Array<number> = []
        const limiter = yield* RateLimiter.make({
          name: "flushed",
          limit: 2,
          window: "10 seconds",
          algorithm: "fixed-window",
          maxWait: 0,
          store: forgetfulStore(refunds)
        })
        yield* TestClock.setTime(1000)
        yield* limiter.take()
        yield* limiter.take()
        const fiber = yield* Effect.forkChild(Effect.flip(limiter.take()))
        yield* TestClock.adjust(0)
        const error = fiber.pollUnsafe()
        assert(error !== undefined && Exit.isSuccess(error), "refused at once, not held to the window's end")
        const refusal = error.value
        assert(refusal._tag === "RateLimitExceeded")
        assert.strictEqual(refusal.reason, "quota")
        assert.deepStrictEqual(refusal.retryAfter, Duration.seconds(9))
        assert.strictEqual(refusal.limit?.algorithm, "fixed-window")
        expect(refunds).toEqual([3])
        assert.strictEqual(yield* Clock.currentTimeMillis, 1000)
      }))

    it.effect("a finite maxWait caps the pacer's hold, at the head of the queue and behind it", () =>
      Effect.gen(function*() {
        const refunds: Array<number> = []
        const limiter = yield* RateLimiter.make({
          name: "capped",
          limit: 1,
          window: "1 second",
          store: forgetfulStore(refunds)
        })
        yield* limiter.take()
        // the pacer would start it at 1000, beyond its 500 ms: refused at once
        const early = yield* Effect.flip(limiter.take({ maxWait: "500 millis" }))
        assert(early._tag === "RateLimitExceeded")
        assert.deepStrictEqual(early.retryAfter, Duration.millis(500))
        // behind a caller held to 1000, one with 1.5 s would start at 2000: it fails at 1000,
        // when it reaches the head, well within its budget
        const held = yield* taker(limiter)
        const behind = yield* Effect.forkChild(
          Effect.flip(Effect.tap(limiter.take({ maxWait: "1500 millis" }), () => Clock.currentTimeMillis))
        )
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(held), 1000)
        const late = yield* Fiber.join(behind)
        assert(late._tag === "RateLimitExceeded")
        assert.deepStrictEqual(late.retryAfter, Duration.millis(500))
        assert.strictEqual(yield* Clock.currentTimeMillis, 1000)
        expect(refunds).toEqual([2, 4])
      }))

    it.effect("a caller queued behind a head the pacer holds past its maxWait fails at once, without a timer", () =>
      Effect.gen(function*() {
        const refunds: Array<number> = []
        const limiter = yield* RateLimiter.make({
          name: "behind",
          limit: 1,
          window: "1 second",
          store: forgetfulStore(refunds)
        })
        yield* limiter.take()
        // held by the pacer until 1000
        const head = yield* taker(limiter)
        yield* TestClock.adjust(0)
        const behind = yield* Effect.forkChild(Effect.flip(limiter.take({ maxWait: "500 millis" })))
        yield* TestClock.adjust(0)
        const refused = behind.pollUnsafe()
        assert(refused !== undefined && Exit.isSuccess(refused), "refused at once")
        const error = refused.value
        assert(error._tag === "RateLimitExceeded")
        assert.deepStrictEqual(error.retryAfter, Duration.millis(500))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(head), 1000)
        expect(refunds).toEqual([3])
      }))

    it.effect("a pause after the reservation that outlasts maxWait fails the held caller", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: uniqueName("paused-late"), limit: 1, window: "1 second" })
        yield* limiter.take()
        const fiber = yield* Effect.forkChild(Effect.flip(limiter.take({ maxWait: "2 seconds" })))
        yield* TestClock.adjust(100)
        yield* limiter.pauseFor("5 seconds")
        yield* TestClock.adjust("1 second")
        const error = yield* Fiber.join(fiber)
        assert(error._tag === "RateLimitExceeded")
        assert.strictEqual(error.reason, "paused")
        assert.deepStrictEqual(error.retryAfter, Duration.millis(3100))
      }))

    it.effect("fail-open starts at once, unpaced, and leaves no backlog for after the outage", () =>
      Effect.gen(function*() {
        let down = true
        const memory = yield* RateLimiterStore.makeMemory
        const flaky: RateLimiterStore.Service = {
          ...memory,
          reserve: (request) =>
            down
              ? Effect.succeed({ _tag: "Reserved", delayMillis: 0, reservation: 0, unlimited: true })
              : memory.reserve(request)
        }
        const limiter = yield* RateLimiter.make({
          name: "open",
          limit: 1,
          window: "1 second",
          maxWait: 0,
          store: flaky
        })
        const during = yield* Effect.forEach(Array.from({ length: 20 }), () => taker(limiter))
        yield* TestClock.adjust(0)
        expect(yield* Effect.forEach(during, Fiber.join)).toEqual(Array.from({ length: 20 }, () => 0))
        down = false
        // the quota applies again from the store's books, not from a backlog of the outage's starts
        yield* limiter.take()
        const refused = yield* Effect.flip(limiter.take())
        assert(refused._tag === "RateLimitExceeded")
        assert.deepStrictEqual(refused.retryAfter, Duration.seconds(1))
      }))
  })

  describe("one queue in start order, one timer", () => {
    it.effect("callers waiting together keep a single timer between them", () =>
      Effect.gen(function*() {
        const { clock, sleeping } = yield* recordingClock
        const limiter = yield* make({ name: uniqueName("one-timer"), limit: 10, window: "1 second" }).pipe(
          Effect.provideService(Clock.Clock, clock)
        )
        const fibers = yield* Effect.forEach(Array.from({ length: 50 }), () => taker(limiter))
        yield* TestClock.adjust(0)
        // the first started; of the 49 waiting, only the head sleeps on the clock
        expect(sleeping).toEqual([100])
        yield* TestClock.adjust("250 millis")
        expect(sleeping).toEqual([300])
        yield* TestClock.adjust("5 seconds")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual(Array.from({ length: 50 }, (_, i) => i * 100))
      }))

    it.effect("a caller given an earlier start goes first, even when it asked later", () =>
      Effect.gen(function*() {
        // a store answering out of order, as replies from a shared store can be on the local clock
        const delays = [1000, 200]
        const store: RateLimiterStore.Service = {
          ...permissiveStore,
          reserve: () => Effect.sync(() => ({ _tag: "Reserved", delayMillis: delays.shift() ?? 0, reservation: 1 }))
        }
        const limiter = yield* RateLimiter.make({
          name: uniqueName("start-order"),
          limit: 10,
          window: "1 second",
          burst: 5,
          store
        })
        const later = yield* taker(limiter)
        yield* TestClock.adjust(0)
        const earlier = yield* taker(limiter)
        yield* TestClock.adjust("2 seconds")
        assert.strictEqual(yield* Fiber.join(earlier), 200)
        assert.strictEqual(yield* Fiber.join(later), 1000)
      }))
  })

  describe("observability", () => {
    it.effect("records the wait per limiter in seconds, and the timer lateness", () =>
      Effect.gen(function*() {
        const name = uniqueName("metrics")
        const limiter = yield* make({ name, limit: 1, window: "1 second" })
        const fibers = yield* Effect.forEach(Array.from({ length: 3 }), () => taker(limiter))
        yield* TestClock.adjust("3 seconds")
        yield* Effect.forEach(fibers, Fiber.join)
        const wait = yield* Metric.value(Metric.withAttributes(RateLimiter.waitSeconds, { name }))
        assert.strictEqual(wait.count, 3)
        assert.strictEqual(wait.sum, 3)
        const lateness = yield* Metric.value(Metric.withAttributes(RateLimiter.timerLatenessSeconds, { name }))
        assert.isAtLeast(lateness.count, 2)
        assert.strictEqual(lateness.sum, 0, "TestClock timers are punctual")
      }))

    it.effect("counts refusals by reason", () =>
      Effect.gen(function*() {
        const name = uniqueName("rejections")
        const limiter = yield* make({ name, limit: 1, window: "1 second", maxWait: 0 })
        yield* limiter.take()
        yield* Effect.flip(limiter.take())
        yield* Effect.flip(limiter.take())
        yield* limiter.pauseFor("1 minute")
        yield* TestClock.adjust("2 seconds")
        yield* Effect.flip(limiter.take())
        const count = (reason: string) =>
          Effect.map(
            Metric.value(Metric.withAttributes(RateLimiter.rejectedTotal, { name, reason })),
            (state) => state.count
          )
        assert.strictEqual(yield* count("quota"), 2)
        assert.strictEqual(yield* count("paused"), 1)
      }))

    it.effect("annotates the current span with the wait", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: "spans", limit: 1, window: "1 second" })
        const call = Effect.andThen(limiter.take(), Effect.currentSpan).pipe(Effect.withSpan("call"))
        const first = yield* Effect.forkChild(call)
        const second = yield* Effect.forkChild(call)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Fiber.join(first)).attributes.get("sluice.limiter.wait_ms"), 0)
        assert.strictEqual((yield* Fiber.join(second)).attributes.get("sluice.limiter.wait_ms"), 1000)
      }))
  })

  describe("service tags, layers and config", () => {
    class Geocoder extends RateLimiter.Tag("geocoder")<Geocoder>() {}

    it.effect("a tag names the limiter and builds it from settings", () =>
      Effect.gen(function*() {
        assert.strictEqual(Geocoder.key, "@sluice/rate-limiter/geocoder")
        assert.strictEqual(Geocoder.id, "geocoder")
        const limiter = yield* Geocoder
        assert.strictEqual(limiter.name, "geocoder")
        assert.isTrue(RateLimiter.isRateLimiter(limiter))
        assert.isFalse(RateLimiter.isRateLimiter({ name: "geocoder" }))
        const fibers = yield* Effect.forEach([1, 2], () => taker(limiter))
        yield* TestClock.adjust("1 second")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([0, 500])
      }).pipe(
        Effect.provide(
          Geocoder.layer({ limit: 2, window: "1 second" }).pipe(Layer.provide(RateLimiterStore.layerMemory))
        )
      ))

    it.effect("config reads and validates one limit", () =>
      Effect.gen(function*() {
        const settings = yield* withConfig({
          GEO: { LIMIT: "5", WINDOW: "1 second", BURST: "2", MAX_WAIT: "3 seconds" }
        })(Config.nested(RateLimiter.config, "GEO"))
        assert.strictEqual(settings.limit, 5)
        assert.strictEqual(settings.burst, 2)
        assert.strictEqual(settings.algorithm, "gcra")
        assert.deepStrictEqual(settings.maxWait, Duration.seconds(3))
        const invalid = (entries: Record<string, string>) => Effect.flip(withConfig(entries)(RateLimiter.config))
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "1 second", ALGORITHM: "fixed-window", BURST: "2" })))
          .toContain("BURST applies to gcra only")
        expect(String(yield* invalid({ LIMIT: "0", WINDOW: "1 second" }))).toContain(
          `LIMIT must be an integer ≥ 1, got "0"`
        )
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "0 seconds" }))).toContain(
          `WINDOW must be a finite duration > 0, got "0 seconds"`
        )
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "1 second", ALGORITHM: "leaky" }))).toContain("ALGORITHM")
      }))

    it.effect("a partly present section is an error naming the missing key; a wholly absent one is not configured", () =>
      Effect.gen(function*() {
        const read = (entries: Record<string, unknown>) =>
          Effect.result(withConfig(entries)(Config.option(Config.nested(RateLimiter.config, "RATE_LIMIT"))))
        const absent = yield* read({ OTHER: "1" })
        assert.deepStrictEqual(absent, Result.succeed(Option.none()))
        const failure = (result: Result.Result<unknown, Config.ConfigError>) => {
          assert(Result.isFailure(result), "a ConfigError")
          return String(result.failure)
        }
        expect(failure(yield* read({ RATE_LIMIT: { LIMIT: "5" } }))).toContain(
          `WINDOW is missing while LIMIT is set: a rate limiter is configured whole`
        )
        // a misspelt key leaves the one it meant missing
        expect(failure(yield* read({ RATE_LIMIT: { LIMIT: "5", WINDOWS: "1 second" } }))).toContain(
          "WINDOW is missing"
        )
        expect(failure(yield* read({ RATE_LIMIT: { WINDOW: "1 second", MAX_WAIT: "1 second" } }))).toContain(
          `LIMIT is missing while WINDOW, MAX_WAIT are set`
        )
      }))

    it.effect("a negative duration in Config is a ConfigError naming the value", () =>
      Effect.gen(function*() {
        const invalid = (entries: Record<string, string>) => Effect.flip(withConfig(entries)(RateLimiter.config))
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "-5 seconds" }))).toContain(
          `WINDOW must be a finite duration > 0, got "-5 seconds"`
        )
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "1 second", MAX_WAIT: "-1 millis" }))).toContain(
          `MAX_WAIT must be a duration ≥ 0, got "-1 millis"`
        )
        expect(String(yield* invalid({ LIMIT: "5", WINDOW: "soon" }))).toContain(
          `WINDOW must be a finite duration > 0, got "soon"`
        )
      }))

    it.effect("Config and the options decode through one schema: what one accepts, the other does", () =>
      Effect.gen(function*() {
        const read = (entries: Record<string, string>) => Effect.result(withConfig(entries)(RateLimiter.config))
        // an unbounded wait budget, as the option takes Duration.infinity
        const unbounded = yield* read({ LIMIT: "5", WINDOW: "1 second", MAX_WAIT: "Infinity" })
        assert(Result.isSuccess(unbounded), "MAX_WAIT=Infinity is read")
        assert.deepStrictEqual(unbounded.success.maxWait, Duration.infinity)
        const limiter = yield* make({ ...unbounded.success, name: "unbounded" })
        assert.deepStrictEqual(limiter.maxWait, Duration.infinity)
        // past 2^53 - 1 a count is no longer exact: both refuse it with the same rule
        const unsafe = yield* read({ LIMIT: "9007199254740993", WINDOW: "1 second" })
        assert(Result.isFailure(unsafe), "an unsafe LIMIT is refused")
        expect(String(unsafe.failure)).toContain("LIMIT must be an integer ≥ 1, got \"9007199254740993\" (not a safe")
        expect(yield* defectOf(make({ name: "unsafe", limit: 2 ** 60, window: "1 second" }))).toContain(
          "limit must be an integer ≥ 1, got 1152921504606847000 (not a safe"
        )
      }))

    it.effect("layerConfig builds the tagged limiter from config", () =>
      Effect.gen(function*() {
        const limiter = yield* Geocoder
        assert.deepStrictEqual(limiter.limits, [{
          dimension: "default",
          limit: 3,
          window: Duration.minutes(1),
          algorithm: "fixed-window",
          burst: 3
        }])
        assert.deepStrictEqual(limiter.maxWait, Duration.infinity)
      }).pipe(
        Effect.provide(
          Geocoder.layerConfig(Config.nested(RateLimiter.config, "GEOCODER")).pipe(
            Layer.provide(RateLimiterStore.layerMemory),
            Layer.provide(
              Layer.succeed(
                ConfigProvider.ConfigProvider,
                provider({ GEOCODER: { LIMIT: "3", WINDOW: "1 minute", ALGORITHM: "fixed-window" } })
              )
            )
          )
        )
      ))
  })

  describe("interruption", () => {
    it.effect("a take whose decision is still in flight leaves at once when interrupted", () =>
      Effect.gen(function*() {
        // a store that never answers, as a store without a timeout might
        let asked = 0
        const silent: RateLimiterStore.Service = {
          ...permissiveStore,
          reserve: () => Effect.andThen(Effect.sync(() => asked++), Effect.never)
        }
        const limiter = yield* RateLimiter.make({
          name: uniqueName("silent"),
          limit: 1,
          window: "1 second",
          store: silent
        })
        const fiber = yield* Effect.forkChild(limiter.take())
        yield* TestClock.adjust(0)
        assert.strictEqual(asked, 1)
        // the interruption does not wait for the answer
        const interrupter = yield* Fiber.interrupt(fiber).pipe(Effect.timeoutOption("1 second"), Effect.forkChild)
        yield* TestClock.adjust("1 second")
        assert(Option.isSome(yield* Fiber.join(interrupter)), "the interruption completed")
        assert(Exit.hasInterrupts(yield* Fiber.await(fiber)))
      }))
  })

  describe("combinators and errors", () => {
    it.effect("withRateLimiter runs the effect after the take, data-first or data-last", () =>
      Effect.gen(function*() {
        const limiter = yield* make({ name: "combinator", limit: 1, window: "1 second" })
        const first = yield* Effect.forkChild(Clock.currentTimeMillis.pipe(RateLimiter.withRateLimiter(limiter)))
        const second = yield* Effect.forkChild(
          RateLimiter.withRateLimiter(Clock.currentTimeMillis, limiter, { cost: 1 })
        )
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(first), 0)
        assert.strictEqual(yield* Fiber.join(second), 1000)
      }))

    it.effect("RateLimitExceeded is a typed, recognisable failure", () =>
      Effect.gen(function*() {
        const limiter = yield* make({
          name: "nominatim",
          limits: [{ limit: 10, window: "1 second" }],
          maxWait: "2 seconds"
        })
        for (let i = 0; i < 21; i++) yield* Effect.forkChild(limiter.take())
        yield* TestClock.adjust(0)
        const error = yield* Effect.flip(limiter.take({ cost: 1 }))
        assert.isTrue(RateLimiter.isRateLimiterError(error))
        assert.strictEqual(error._tag, "RateLimitExceeded")
        const recovered = yield* limiter.take().pipe(
          Effect.as("started"),
          Effect.catchTag("RateLimitExceeded", (e) => Effect.succeed(Duration.toMillis(e.retryAfter)))
        )
        assert.strictEqual(recovered, 100)
        expect(error.message).toBe(
          `rate limiter "nominatim": a start within 2s is impossible under 10 per 1s (burst 1); retry after 100ms`
        )
      }))
  })
})

describe("errors are the exported classes", () => {
  it.effect("instanceof works on what the limiter and the store fail with", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({ name: "instanceof-check", limit: 1, window: "1 second", maxWait: 0 })
      yield* limiter.take()
      const error = yield* Effect.flip(limiter.take())
      assert.instanceOf(error, RateLimiter.RateLimitExceeded)
      assert.instanceOf(
        new RateLimiterStore.RateLimiterStoreError({ message: "down" }),
        RateLimiterStore.RateLimiterStoreError
      )
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))
})
