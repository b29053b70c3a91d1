/**
 * The behaviour every `RateLimiterStore` must have, as a suite any store package runs against its
 * own layer: `storeContract("redis", RedisRateLimiterStore.layer(...))`.
 *
 * Each test provides `layer` afresh inside the test, so the store is built on the test's
 * `TestClock` (a store that decides on a server clock must accept an injected clock for this
 * suite) and every figure below is an exact instant. Names are unique per run, so a persistent
 * store needs no cleaning between tests.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import type { Layer } from "effect"
import { Clock, Duration, Effect, Exit, FastCheck, Fiber, Logger, Option, TestClock } from "effect"

/**
 * @param label shown in the suite's name
 * @param layer the store under test, built once per test
 */
export const storeContract = <E>(
  label: string,
  layer: Layer.Layer<RateLimiterStore.RateLimiterStore, E>,
  options?: {
    readonly namePrefix?: string | undefined
    /**
     * The usage cases (costs per limit, settle, tighten); default true. A store adopting the
     * usage operations runs with `false` only until it implements them.
     */
    readonly usage?: boolean | undefined
  }
): void => {
  const uniqueName = (base: string): string =>
    `${options?.namePrefix ?? ""}${base}-${globalThis.crypto.randomUUID().slice(0, 8)}`

  /** Runs `body` with one store instance, built inside the test on its TestClock. */
  const withStore = <A, E2, R>(
    body: (store: RateLimiterStore.Service) => Effect.Effect<A, E2, R>
  ) => Effect.flatMap(RateLimiterStore.RateLimiterStore, body).pipe(Effect.provide(layer))

  type Settings = RateLimiter.Settings & { readonly name?: string }

  /**
   * Decisions answered by each limiter's store so far. A remote store answers over the network:
   * `TestClock.adjust` only waits for fibers to suspend, and a fiber waiting for a reply counts as
   * suspended, so the clock must not move before the takers just forked have their decisions.
   */
  const answered = new WeakMap<RateLimiter.RateLimiter, () => number>()

  const limiterOn = (store: RateLimiterStore.Service, settings: Settings) => {
    let count = 0
    const counting: RateLimiterStore.Service = {
      ...store,
      reserve: (request) => Effect.ensuring(store.reserve(request), Effect.sync(() => count++))
    }
    return Effect.tap(
      RateLimiter.make({ ...settings, name: settings.name ?? uniqueName("limiter"), store: counting }),
      (limiter) => Effect.sync(() => answered.set(limiter, () => count))
    )
  }

  /** One real turn of the event loop, whatever the clock: lets network replies arrive. */
  const ioTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

  /** Waits (in real event-loop turns, at most ~10 s) until the store has answered `n` more decisions. */
  const awaitDecisions = (limiter: RateLimiter.RateLimiter, before: number, n: number) =>
    Effect.gen(function*() {
      const count = answered.get(limiter)
      if (count === undefined) return
      for (let turn = 0; count() < before + n; turn++) {
        if (turn > 100_000) return yield* Effect.dieMessage(`the store answered ${count() - before} of ${n} takes`)
        yield* ioTurn
      }
    })

  /** Forks a taker now, once its decision is back; its result is the instant it was let start. */
  const taker = (limiter: RateLimiter.RateLimiter, options?: RateLimiter.TakeOptions) =>
    Effect.flatMap(takers(limiter, 1, options), ([fiber]) => Effect.succeed(fiber))

  /** Forks `n` takers now, in order, and returns once the store has decided all of them. */
  const takers = (limiter: RateLimiter.RateLimiter, n: number, options?: RateLimiter.TakeOptions) =>
    Effect.gen(function*() {
      const before = answered.get(limiter)?.() ?? 0
      const fibers = []
      for (let i = 0; i < n; i++) {
        fibers.push(yield* Effect.fork(Effect.zipRight(limiter.take(options), Clock.currentTimeMillis)))
        // one at a time, so that arrival order is fork order over a network too
        yield* awaitDecisions(limiter, before + i, 1)
      }
      return fibers
    })

  const startsOf = <A, E2>(fibers: ReadonlyArray<Fiber.Fiber<A, E2>>) => Effect.forEach(fibers, Fiber.join)

  const exceeded = <A>(effect: Effect.Effect<A, RateLimiter.RateLimiterError>) =>
    Effect.flatMap(
      Effect.flip(effect),
      (error) => error._tag === "RateLimitExceeded" ? Effect.succeed(error) : Effect.die(error)
    )

  describe(`RateLimiterStore contract: ${label}`, () => {
    describe("gcra", () => {
      it.scoped("spaces starts evenly by default (burst 1)", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 2, window: "1 second" })
            const fibers = yield* takers(limiter, 5)
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf(fibers)).toEqual([0, 500, 1000, 1500, 2000])
          })
        ))

      it.scoped("lets `burst` start at once, then the rate, and refills while idle", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 10, window: "1 second", burst: 3 })
            const first = yield* takers(limiter, 6)
            yield* TestClock.adjust("2 seconds")
            expect(yield* startsOf(first)).toEqual([0, 0, 0, 100, 200, 300])
            const second = yield* takers(limiter, 4)
            yield* TestClock.adjust("1 second")
            expect(yield* startsOf(second)).toEqual([2000, 2000, 2000, 2100])
          })
        ))

      it.scoped("charges the cost of each take", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 10, window: "1 second", burst: 5 })
            const a = yield* taker(limiter, { cost: 5 })
            const b = yield* taker(limiter, { cost: 1 })
            const c = yield* taker(limiter, { cost: 2 })
            yield* TestClock.adjust("1 second")
            expect(yield* startsOf([a, b, c])).toEqual([0, 100, 300])
          })
        ))
    })

    describe("fixed window", () => {
      it.scoped("resets on the clock's window boundaries, not at the first take", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(300)
            const limiter = yield* limiterOn(store, { limit: 2, window: "1 second", algorithm: "fixed-window" })
            const fibers = yield* takers(limiter, 5)
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf(fibers)).toEqual([300, 300, 1000, 1000, 2000])
          })
        ))

      it.scoped("a daily window resets at midnight UTC", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const evening = Date.UTC(2024, 0, 1, 23, 59)
            yield* TestClock.setTime(evening)
            const limiter = yield* limiterOn(store, { limit: 2, window: "1 day", algorithm: "fixed-window" })
            const fibers = yield* takers(limiter, 3)
            yield* TestClock.adjust("2 minutes")
            expect(yield* startsOf(fibers)).toEqual([evening, evening, Date.UTC(2024, 0, 2)])
          })
        ))

      it.scoped("never splits one start's cost across two windows", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 3, window: "1 second", algorithm: "fixed-window" })
            const a = yield* taker(limiter, { cost: 2 })
            const b = yield* taker(limiter, { cost: 2 })
            const c = yield* taker(limiter, { cost: 1 })
            yield* TestClock.adjust("2 seconds")
            expect(yield* startsOf([a, b, c])).toEqual([0, 1000, 1000])
          })
        ))
    })

    describe("sliding window (exact log)", () => {
      it.scoped("counts every window ending at the start, unlike a fixed window", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const arrivals = [0, 900, 1000, 1500]
            const run = (algorithm: RateLimiter.Algorithm) =>
              Effect.gen(function*() {
                const startTime = yield* Clock.currentTimeMillis
                const limiter = yield* limiterOn(store, { limit: 2, window: "1 second", algorithm })
                const fibers: Array<Fiber.Fiber<number, RateLimiter.RateLimiterError>> = []
                for (const at of arrivals) {
                  yield* TestClock.setTime(startTime + at)
                  fibers.push(yield* taker(limiter))
                }
                yield* TestClock.adjust("2 seconds")
                return (yield* startsOf(fibers)).map((t) => t - startTime)
              })
            expect(yield* run("sliding-window")).toEqual([0, 900, 1000, 1900])
            yield* TestClock.setTime(10_000)
            expect(yield* run("fixed-window")).toEqual([0, 900, 1000, 1500])
          })
        ))

      it.scoped("holds a window's quota across cost and many takers", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 3, window: "1 second", algorithm: "sliding-window" })
            const a = yield* taker(limiter, { cost: 2 })
            const b = yield* taker(limiter, { cost: 2 })
            const c = yield* taker(limiter)
            yield* TestClock.adjust("3 seconds")
            // b needs 2 of 3 units free: a's 2 units leave the window at 1000; c fits beside b.
            expect(yield* startsOf([a, b, c])).toEqual([0, 1000, 1000])
          })
        ))
    })

    describe("maxWait", () => {
      it.scoped("fails at once with retryAfter and the limit, consuming nothing", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const name = uniqueName("nominatim")
            const limiter = yield* limiterOn(store, { name, limit: 1, window: "1 second", maxWait: "2 seconds" })
            const fibers = yield* takers(limiter, 3)
            yield* TestClock.adjust(0)
            const error = yield* exceeded(limiter.take())
            assert.strictEqual(yield* Clock.currentTimeMillis, 0)
            assert.strictEqual(error.limiter, name)
            // the limiter is named in its own field: Error's name stays the tag, which String() leads with
            assert.strictEqual(error.name, "RateLimitExceeded")
            assert.isTrue(String(error).startsWith("RateLimitExceeded: rate limiter "), String(error))
            assert.strictEqual(error.reason, "quota")
            assert.strictEqual(error.cost, 1)
            assert.deepStrictEqual(error.retryAfter, Duration.millis(1000))
            assert.strictEqual(error.limit?.limit, 1)
            assert.strictEqual(
              error.message,
              `rate limiter "${name}": a start within 2s is impossible under 1 per 1s (burst 1); retry after 1s`
            )
            // nothing was consumed: an unbounded take starts right after the three reservations
            const last = yield* taker(limiter, { maxWait: Duration.infinity })
            yield* TestClock.adjust("4 seconds")
            expect(yield* startsOf([...fibers, last])).toEqual([0, 1000, 2000, 3000])
          })
        ))

      it.scoped("0 means never wait", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 4, window: "1 second", maxWait: 0 })
            yield* limiter.take()
            const error = yield* exceeded(limiter.take())
            assert.deepStrictEqual(error.retryAfter, Duration.millis(250))
            expect(error.message).toContain("a start now is impossible under 4 per 1s (burst 1); retry after 250ms")
            yield* TestClock.adjust(250)
            yield* limiter.take()
            assert.strictEqual(yield* Clock.currentTimeMillis, 250)
          })
        ))

      it.scoped("a per-take budget overrides the limiter's", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second", maxWait: 0 })
            yield* limiter.take()
            const fiber = yield* taker(limiter, { maxWait: "1 second" })
            yield* TestClock.adjust("1 second")
            assert.strictEqual(yield* Fiber.join(fiber), 1000)
          })
        ))
    })

    describe("refunds", () => {
      it.scoped("an interrupted sleeper holding the latest reservation gives its slot back", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
            const [a, b, c] = yield* takers(limiter, 3)
            yield* TestClock.adjust(500)
            yield* Fiber.interrupt(c)
            const d = yield* taker(limiter)
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf([a, b, d])).toEqual([0, 1000, 2000])
          })
        ))

      it.scoped("an interrupted sleeper that is not the latest loses its slot", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
            const [a, b, c] = yield* takers(limiter, 3)
            yield* TestClock.adjust(500)
            yield* Fiber.interrupt(b)
            const d = yield* taker(limiter)
            yield* TestClock.adjust("4 seconds")
            // nobody starts at 1000; refunding b would have let d start at 2000 beside c: two at
            // once under burst 1
            expect(yield* startsOf([a, c, d])).toEqual([0, 2000, 3000])
          })
        ))

      it.scoped("refunds chain back from the latest, once each", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
            const [a, b, c] = yield* takers(limiter, 3)
            yield* TestClock.adjust(500)
            yield* Fiber.interrupt(c)
            yield* Fiber.interrupt(b)
            const [d, e] = yield* takers(limiter, 2)
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf([a, d, e])).toEqual([0, 1000, 2000])
          })
        ))

      it.scoped("a fixed window's refund gives back the space its reservation skipped", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 10, window: "1 second", algorithm: "fixed-window" })
            yield* limiter.take()
            // 10 units do not fit in the 9 left: reserved in the next window, skipping them
            const heavy = yield* taker(limiter, { cost: 10 })
            yield* Fiber.interrupt(heavy)
            yield* limiter.take({ cost: 9, maxWait: 0 })
            assert.strictEqual(yield* Clock.currentTimeMillis, 0)
            const error = yield* exceeded(limiter.take({ maxWait: 0 }))
            assert.deepStrictEqual(error.retryAfter, Duration.seconds(1))
          })
        ))

      it.scoped("a fixed window too fine for exact arithmetic stays within its quota after a refund", () =>
        withStore((store) =>
          Effect.gen(function*() {
            // 1 ms windows of 10,000 units at today's epoch: base × limit is beyond 2^53
            yield* TestClock.setTime(1_700_000_000_000)
            const limiter = yield* limiterOn(store, { limit: 10_000, window: "1 millis", algorithm: "fixed-window" })
            yield* limiter.take({ cost: 9_000 })
            const heavy = yield* taker(limiter, { cost: 2_000 })
            yield* Fiber.interrupt(heavy)
            // 1,000 units are left in this window at most, whatever the refund could restore
            const error = yield* exceeded(limiter.take({ cost: 1_001, maxWait: 0 }))
            assert.strictEqual(error.reason, "quota")
          })
        ))

      it.scoped("a refund never lets a window exceed its quota (fixed and sliding windows)", () =>
        withStore((store) =>
          Effect.gen(function*() {
            for (const [i, algorithm] of (["fixed-window", "sliding-window"] as const).entries()) {
              const origin = (i + 1) * 10_000
              yield* TestClock.setTime(origin)
              const limiter = yield* limiterOn(store, { limit: 2, window: "1 second", algorithm })
              const [a, b, c, d] = yield* takers(limiter, 4)
              yield* TestClock.adjust(100)
              yield* Fiber.interrupt(d)
              const e = yield* taker(limiter)
              const f = yield* taker(limiter)
              yield* TestClock.adjust("3 seconds")
              const starts = (yield* startsOf([a, b, c, e, f])).map((t) => t - origin)
              expect(starts).toEqual([0, 0, 1000, 1000, 2000])
            }
          })
        ))
    })

    describe("several limits", () => {
      it.scoped("start at the earliest instant every limit allows", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [
                { limit: 2, window: "1 second", burst: 2 },
                { limit: 3, window: "10 seconds", algorithm: "fixed-window" }
              ]
            })
            const fibers = yield* takers(limiter, 5)
            yield* TestClock.adjust("11 seconds")
            expect(yield* startsOf(fibers)).toEqual([0, 0, 500, 10_000, 10_000])
          })
        ))

      it.scoped("charge all of them or none", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [
                { limit: 1, window: "1 second" },
                { limit: 2, window: "10 seconds", algorithm: "fixed-window" }
              ],
              maxWait: "500 millis"
            })
            yield* limiter.take()
            const error = yield* exceeded(limiter.take())
            assert.deepStrictEqual(error.retryAfter, Duration.millis(500))
            assert.strictEqual(error.limit?.algorithm, "gcra")
            // the refusal charged neither limit: the fixed window still has one unit left
            yield* TestClock.adjust("1 second")
            yield* limiter.take()
            const refused = yield* exceeded(limiter.take())
            assert.strictEqual(refused.limit?.algorithm, "fixed-window")
            assert.deepStrictEqual(refused.retryAfter, Duration.millis(8500))
          })
        ))
    })

    describe("pause", () => {
      it.scoped("every caller waits out the pause, which can be read as a relative duration", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 10, window: "1 second", burst: 10 })
            yield* limiter.pauseFor("5 seconds")
            assert.deepStrictEqual(yield* limiter.pauseRemaining, Duration.seconds(5))
            yield* TestClock.adjust("2 seconds")
            assert.deepStrictEqual(yield* limiter.pauseRemaining, Duration.seconds(3))
            // a shorter pause never shortens the current one
            yield* limiter.pauseFor("1 second")
            assert.deepStrictEqual(yield* limiter.pauseRemaining, Duration.seconds(3))
            const error = yield* exceeded(limiter.take({ maxWait: "1 second" }))
            assert.strictEqual(error.reason, "paused")
            assert.strictEqual(error.limit, undefined)
            assert.deepStrictEqual(error.retryAfter, Duration.seconds(2))
            const fibers = yield* takers(limiter, 2)
            yield* TestClock.adjust("4 seconds")
            expect(yield* startsOf(fibers)).toEqual([5000, 5000])
            assert.deepStrictEqual(yield* limiter.pauseRemaining, Duration.zero)
          })
        ))

      it.scoped("holds callers already asleep until the pause ends", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
            const [a, b] = yield* takers(limiter, 2)
            yield* TestClock.adjust(100)
            yield* limiter.pauseFor("3 seconds")
            yield* TestClock.adjust("5 seconds")
            expect(yield* startsOf([a, b])).toEqual([0, 3100])
          })
        ))

      it.scoped("moves a GCRA backlog past the pause: new callers queue after the held ones", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 10, window: "1 second" })
            const held = yield* takers(limiter, 5)
            yield* TestClock.adjust(50)
            yield* limiter.pauseFor("1 second")
            const late = yield* takers(limiter, 1)
            yield* TestClock.adjust("3 seconds")
            // the held four start when the pause ends, paced; the newcomer after them, not beside them
            expect(yield* startsOf([...held, ...late])).toEqual([0, 1050, 1150, 1250, 1350, 1500])
          })
        ))

      it.scoped("reaches the sleepers of another limiter on the key with its next decision", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const name = uniqueName("learned")
            const one = yield* limiterOn(store, { name, limit: 10, window: "1 second" })
            const two = yield* limiterOn(store, { name, limit: 10, window: "1 second" })
            const asleep = yield* takers(two, 3)
            yield* TestClock.adjust(50)
            // one learns of a cooldown (say from a 429) that two's sleepers know nothing about...
            yield* one.pauseFor("1 second")
            yield* TestClock.adjust(10)
            // ...until two decides again: then its sleepers are held too
            const next = yield* takers(two, 1)
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf([...asleep, ...next])).toEqual([0, 1050, 1150, 1300])
          })
        ))

      it.scoped("is shared by limiters on the same key", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const name = uniqueName("shared")
            const one = yield* limiterOn(store, { name, limit: 10, window: "1 second", burst: 10 })
            const two = yield* limiterOn(store, { name, limit: 10, window: "1 second", burst: 10 })
            yield* one.pauseFor("2 seconds")
            assert.deepStrictEqual(yield* two.pauseRemaining, Duration.seconds(2))
            const fiber = yield* taker(two)
            yield* TestClock.adjust("3 seconds")
            assert.strictEqual(yield* Fiber.join(fiber), 2000)
          })
        ))
    })

    describe("many takers", () => {
      it.scoped("hundreds of concurrent takers start exactly on schedule", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 50, window: "1 second", burst: 5 })
            const fibers = yield* takers(limiter, 300)
            yield* TestClock.adjust("10 seconds")
            const starts = yield* startsOf(fibers)
            const expected = starts.map((_, i) => Math.max(0, i - 4) * 20)
            expect(starts).toEqual(expected)
          })
        ))

      it.scoped("limiters sharing a key share the quota (as processes sharing a store do)", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const name = uniqueName("shared")
            const one = yield* limiterOn(store, { name, limit: 4, window: "1 second" })
            const two = yield* limiterOn(store, { name, limit: 4, window: "1 second" })
            const fibers: Array<Fiber.Fiber<number, RateLimiter.RateLimiterError>> = []
            for (let i = 0; i < 4; i++) {
              fibers.push(yield* taker(one), yield* taker(two))
            }
            yield* TestClock.adjust("3 seconds")
            expect(yield* startsOf(fibers)).toEqual([0, 250, 500, 750, 1000, 1250, 1500, 1750])
          })
        ))
    })

    describe("mass cancellation", () => {
      /** A deterministic shuffle (a linear congruential generator), so a failure replays. */
      const shuffled = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
        const out = [...items]
        let x = seed
        for (let i = out.length - 1; i > 0; i--) {
          x = (x * 1103515245 + 12345) % 2147483648
          const j = x % (i + 1)
          const tmp = out[i]
          out[i] = out[j]
          out[j] = tmp
        }
        return out
      }

      const orders = {
        "oldest first": <A>(fibers: ReadonlyArray<A>) => [...fibers],
        "newest first": <A>(fibers: ReadonlyArray<A>) => [...fibers].reverse(),
        "in random order": <A>(fibers: ReadonlyArray<A>) => shuffled(fibers, 17)
      } as const

      // 10 per second; with only the takes that started before the cancellation (at 0 and up to
      // 500 ms), the next take at 500 ms starts at `next`: one emission interval on for GCRA, the
      // next window for the window algorithms.
      const cases = [
        { algorithm: "gcra", next: 600 },
        { algorithm: "fixed-window", next: 1000 },
        { algorithm: "sliding-window", next: 1000 }
      ] as const

      for (const { algorithm, next } of cases) {
        for (const [order, arrange] of Object.entries(orders)) {
          it.scoped(`${algorithm}: interrupting 1,000 queued takers ${order} gives every slot back`, () =>
            withStore((store) =>
              Effect.gen(function*() {
                const limiter = yield* limiterOn(store, { limit: 10, window: "1 second", algorithm })
                const fibers = yield* takers(limiter, 1000)
                yield* TestClock.adjust(500)
                const waiting: Array<Fiber.Fiber<number, RateLimiter.RateLimiterError>> = []
                for (const fiber of fibers) {
                  if (Option.isNone(yield* Fiber.poll(fiber))) waiting.push(fiber)
                }
                expect(waiting.length).toBeGreaterThan(980)
                for (const fiber of arrange(waiting)) yield* Fiber.interrupt(fiber)
                const after = yield* taker(limiter)
                yield* TestClock.adjust("2 seconds")
                // (polled, not joined: a take still held for the lost slots fails here at once)
                expect(yield* Fiber.poll(after)).toEqual(Option.some(Exit.succeed(next)))
              })
            ))
        }
      }

      it.scoped("a cancelled run below a live reservation stays until that one goes too", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
            const [a, b, c, d] = yield* takers(limiter, 4)
            yield* TestClock.adjust(500)
            yield* Fiber.interrupt(b)
            yield* Fiber.interrupt(c)
            // d still holds 3000: b's and c's slots cannot go back yet
            const e = yield* taker(limiter)
            yield* TestClock.adjust("5 seconds")
            expect(yield* startsOf([a, d, e])).toEqual([0, 3000, 4000])
          })
        ))

      it.scoped("rolls back over cancelled runs once the latest goes (the store interface)", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(1_700_000_000_000)
            const key = uniqueName("raw")
            const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
              { algorithm: "gcra", limit: 1, windowMillis: 1000, burst: 1 },
              { algorithm: "fixed-window", limit: 2, windowMillis: 1000, burst: 2 }
            ]
            const request = { key, limits, cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY }
            const reserved: Array<RateLimiterStore.Reserved> = []
            for (let i = 0; i < 5; i++) {
              const r = yield* store.reserve(request)
              assert(r._tag === "Reserved")
              reserved.push(r)
            }
            expect(reserved.map((r) => r.delayMillis)).toEqual([0, 1000, 2000, 3000, 4000])
            const refund = (r: RateLimiterStore.Reserved) =>
              store.refund({ key, limits, cost: 1, reservation: r.reservation, restore: r.restore })
            assert.isFalse(yield* refund(reserved[2]), "remembered, not yet given back")
            assert.isFalse(yield* refund(reserved[1]), "remembered, not yet given back")
            assert.isFalse(yield* refund(reserved[1]), "a repeated refund is a no-op")
            assert.isTrue(yield* refund(reserved[4]))
            // 3 is now the latest; when it goes, 2 and 1 go with it
            assert.isTrue(yield* refund(reserved[3]))
            const again = yield* store.reserve(request)
            assert(again._tag === "Reserved")
            assert.strictEqual(again.delayMillis, 1000)
          })
        ))

      it.effect.prop(
        "no window ever holds more than its quota, whatever arrives and is interrupted",
        [FastCheck.record({
          algorithm: FastCheck.constantFrom(...(["gcra", "fixed-window", "sliding-window"] as const)),
          limit: FastCheck.integer({ min: 1, max: 4 }),
          burst: FastCheck.integer({ min: 1, max: 3 }),
          events: FastCheck.array(
            FastCheck.record({
              gap: FastCheck.integer({ min: 0, max: 300 }),
              cost: FastCheck.integer({ min: 1, max: 2 }),
              interrupt: FastCheck.option(FastCheck.nat(), { nil: undefined })
            }),
            { minLength: 1, maxLength: 30 }
          )
        })],
        ([{ algorithm, burst: burstInput, events, limit }]) =>
          withStore((store) =>
            Effect.gen(function*() {
              const window = 1000
              const burst = algorithm === "gcra" ? Math.min(burstInput, limit) : limit
              const limiter = yield* limiterOn(
                store,
                algorithm === "gcra" ? { limit, window, burst } : { limit, window, algorithm }
              )
              const origin = yield* Clock.currentTimeMillis
              const started: Array<{ readonly at: number; readonly cost: number }> = []
              const fibers: Array<Fiber.Fiber<void, RateLimiter.RateLimiterError>> = []
              const maxCost = Math.min(burst, limit)
              for (const event of events) {
                yield* TestClock.adjust(event.gap)
                const cost = Math.min(event.cost, maxCost)
                const before = answered.get(limiter)?.() ?? 0
                fibers.push(
                  yield* Effect.fork(
                    Effect.flatMap(limiter.take({ cost }), () =>
                      Effect.map(Clock.currentTimeMillis, (at) => {
                        started.push({ at: at - origin, cost })
                      }))
                  )
                )
                yield* awaitDecisions(limiter, before, 1)
                if (event.interrupt !== undefined) yield* Fiber.interrupt(fibers[event.interrupt % fibers.length])
              }
              yield* TestClock.adjust("1 minute")
              yield* Effect.forEach(fibers, Fiber.await, { discard: true })
              const unitsIn = (from: number, to: number) =>
                started.reduce((units, s) => s.at >= from && s.at < to ? units + s.cost : units, 0)
              for (const { at } of started) {
                if (algorithm === "fixed-window") {
                  const from = Math.floor(at / window) * window
                  expect(unitsIn(from, from + window)).toBeLessThanOrEqual(limit)
                } else if (algorithm === "sliding-window") {
                  expect(unitsIn(at - window + 1e-6, at + 1e-6)).toBeLessThanOrEqual(limit)
                } else {
                  expect(unitsIn(at, at + window)).toBeLessThanOrEqual(limit + burst)
                }
              }
            })
          ),
        { fastCheck: { numRuns: 30 }, timeout: 120_000 }
      )
    })

    describe("the store interface", () => {
      const spec: RateLimiterStore.LimitSpec = { algorithm: "gcra", limit: 1, windowMillis: 1000, burst: 1 }

      it.scoped("answers with relative delays and refunds only the latest reservation, once", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(1_700_000_000_000)
            const key = uniqueName("raw")
            const request = { key, limits: [spec], cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY }
            const r1 = yield* store.reserve(request)
            const r2 = yield* store.reserve(request)
            const r3 = yield* store.reserve({ ...request, maxWaitMillis: 1500 })
            assert(r1._tag === "Reserved" && r2._tag === "Reserved")
            assert.strictEqual(r1.delayMillis, 0)
            assert.strictEqual(r2.delayMillis, 1000)
            assert(r3._tag === "Refused")
            assert.strictEqual(r3.delayMillis, 2000)
            assert.strictEqual(r3.retryAfterMillis, 500)
            assert.strictEqual(r3.binding, 0)
            const refund = (reservation: number) => store.refund({ key, limits: [spec], cost: 1, reservation })
            assert.isFalse(yield* refund(r1.reservation), "not the latest")
            assert.isTrue(yield* refund(r2.reservation))
            assert.isFalse(yield* refund(r2.reservation), "a repeated refund is a no-op")
            const r4 = yield* store.reserve(request)
            assert(r4._tag === "Reserved")
            assert.strictEqual(r4.delayMillis, 1000)
            assert.notStrictEqual(r4.reservation, r2.reservation)
          })
        ))

      it.scoped("pause and readPause are relative durations", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(1_700_000_000_000)
            const key = uniqueName("raw")
            assert.strictEqual(yield* store.readPause(key), 0)
            yield* store.pause(key, 1500)
            assert.strictEqual(yield* store.readPause(key), 1500)
            yield* TestClock.adjust(1000)
            assert.strictEqual(yield* store.readPause(key), 500)
            const result = yield* store.reserve({ key, limits: [spec], cost: 1, maxWaitMillis: 100 })
            assert(result._tag === "Refused")
            assert.strictEqual(result.binding, -1)
            assert.strictEqual(result.retryAfterMillis, 400)
          })
        ))

      it.scoped("a refused take leaves every limit as it was", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const key = uniqueName("raw")
            const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
              { algorithm: "gcra", limit: 1, windowMillis: 1000, burst: 1 },
              { algorithm: "sliding-window", limit: 3, windowMillis: 10_000, burst: 3 },
              { algorithm: "fixed-window", limit: 3, windowMillis: 10_000, burst: 3 }
            ]
            const reserve = (maxWaitMillis: number) => store.reserve({ key, limits, cost: 1, maxWaitMillis })
            const delays: Array<number> = []
            for (let i = 0; i < 6; i++) {
              const taken = yield* reserve(Number.POSITIVE_INFINITY)
              assert(taken._tag === "Reserved")
              delays.push(taken.delayMillis)
              const refused = yield* reserve(0)
              assert.strictEqual(refused._tag, "Refused")
            }
            expect(delays).toEqual([0, 1000, 2000, 10_000, 11_000, 12_000])
          })
        ))
    })

    if (options?.usage !== false) usageCases()

    it.scoped("a take whose wait is interrupted at the start instant does not double-start", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const limiter = yield* limiterOn(store, { limit: 1, window: "1 second" })
          const [a, b] = yield* takers(limiter, 2)
          yield* TestClock.adjust("1 second")
          const exit = yield* Fiber.interrupt(b)
          assert(Exit.isSuccess(exit), "b had already started")
          const c = yield* taker(limiter)
          yield* TestClock.adjust("2 seconds")
          expect(yield* startsOf([a, c])).toEqual([0, 2000])
        })
      ))
  })

  /** The usage cases: costs per dimension, settle and release, tighten. */
  function usageCases() {
    describe("usage: dimensions, reserve and settle, tighten", () => {
      const tokens = (limit: number, extra?: Partial<RateLimiter.Limit>): RateLimiter.Limit => ({
        dimension: "tokens",
        limit,
        window: "1 second",
        burst: limit,
        ...extra
      })

      /** Whether a take of `cost` may start now (it consumes it when it may). */
      const fitsNow = (limiter: RateLimiter.RateLimiter, cost: RateLimiter.Cost) =>
        Effect.map(Effect.either(limiter.take({ cost, maxWait: 0 })), (result) => result._tag === "Right")

      /** How long a take of `cost` would wait (it consumes nothing: refused with a zero budget). */
      const waitFor = (limiter: RateLimiter.RateLimiter, cost: RateLimiter.Cost) =>
        Effect.map(
          Effect.either(limiter.take({ cost, maxWait: 0 })),
          (result) =>
            result._tag === "Right" ? 0 : Duration.toMillis((result.left as RateLimiter.RateLimitExceeded).retryAfter)
        )

      it.scoped("a cost per dimension charges the limits of each dimension it names, and only those", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [{ dimension: "requests", limit: 2, window: "1 second", burst: 2 }, tokens(100)]
            })
            expect(limiter.dimensions).toEqual(["requests", "tokens"])
            const a = yield* taker(limiter, { cost: { requests: 1, tokens: 60 } })
            // 40 tokens left: 60 more are there 200 ms later (10 ms a token); requests allow it at once
            const b = yield* taker(limiter, { cost: { requests: 1, tokens: 60 } })
            // no tokens: only the requests limit decides (one more every 500 ms)
            const c = yield* taker(limiter, { cost: { requests: 1 } })
            yield* TestClock.adjust("2 seconds")
            expect(yield* startsOf([a, b, c])).toEqual([0, 200, 500])
          })
        ))

      it.scoped("a number charges every limit, as a take always did", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [{ dimension: "requests", limit: 10, window: "1 second", burst: 10 }, tokens(3)]
            })
            const fibers = yield* takers(limiter, 4)
            yield* TestClock.adjust("1 second")
            // the 3-token bucket binds: the fourth start waits a token's 333 ms
            expect((yield* startsOf(fibers)).map(Math.round)).toEqual([0, 0, 0, 333])
          })
        ))

      it.scoped("a debt moves the schedule forward: the next caller pays it, the settling one never waits", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limits: [tokens(100)] })
            const reservation = yield* limiter.reserve({ cost: { tokens: 50 } })
            expect(reservation.cost).toEqual({ tokens: 50 })
            yield* reservation.settle({ tokens: 150 })
            assert.strictEqual(yield* Clock.currentTimeMillis, 0)
            // 150 tokens charged at 10 ms each: a full bucket again at 1500
            assert.strictEqual(yield* waitFor(limiter, { tokens: 100 }), 1500)
          })
        ))

      it.scoped("GCRA: the unused part of the latest reservation comes back", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limits: [tokens(100)] })
            const reservation = yield* limiter.reserve({ cost: { tokens: 80 } })
            assert.strictEqual(yield* waitFor(limiter, { tokens: 100 }), 800)
            yield* reservation.settle({ tokens: 20 })
            assert.strictEqual(yield* waitFor(limiter, { tokens: 100 }), 200)
          })
        ))

      it.scoped("GCRA: a give back never moves a start decided after the reservation earlier than its own charges", () =>
        withStore((store) =>
          Effect.gen(function*() {
            // 1 token a second, a bucket of 10
            const limiter = yield* limiterOn(store, {
              limits: [{ dimension: "tokens", limit: 10, window: "10 seconds", burst: 10 }]
            })
            const early = yield* limiter.reserve({ cost: { tokens: 10 } })
            yield* TestClock.adjust("20 seconds")
            // the bucket refilled; 5 tokens at 20 s leave it holding 5 (6 at 21 s)
            yield* limiter.take({ cost: { tokens: 5 } })
            yield* TestClock.adjust("1 second")
            yield* early.settle({ tokens: 0 })
            // its 10 tokens were long since refilled: giving them back now would let 10 start at
            // 21 s beside the 5 of 20 s, and more than 10 + 10 in the window from 20 s
            assert.strictEqual(yield* waitFor(limiter, { tokens: 10 }), 4000)
          })
        ))

      it.scoped("fixed window: a debt fills the window; the unused part comes back while the window is open", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [tokens(10, { algorithm: "fixed-window", burst: undefined })]
            })
            const over = yield* limiter.reserve({ cost: { tokens: 5 } })
            yield* over.settle({ tokens: 9 })
            assert.strictEqual(yield* waitFor(limiter, { tokens: 2 }), 1000)
            assert.isTrue(yield* fitsNow(limiter, { tokens: 1 }))
            yield* TestClock.adjust("1 second")
            const under = yield* limiter.reserve({ cost: { tokens: 6 } })
            yield* under.settle({ tokens: 2 })
            assert.isTrue(yield* fitsNow(limiter, { tokens: 8 }))
            assert.isFalse(yield* fitsNow(limiter, { tokens: 1 }))
            // a window that closed keeps what it counted
            yield* TestClock.adjust("1 second")
            const late = yield* limiter.reserve({ cost: { tokens: 6 } })
            yield* TestClock.adjust("1 second")
            yield* late.settle({ tokens: 0 })
            assert.isTrue(yield* fitsNow(limiter, { tokens: 10 }))
          })
        ))

      it.scoped("sliding window: a debt is logged; the unused units leave the log", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [tokens(5, { algorithm: "sliding-window", burst: undefined })]
            })
            const under = yield* limiter.reserve({ cost: { tokens: 3 } })
            yield* under.settle({ tokens: 1 })
            assert.isTrue(yield* fitsNow(limiter, { tokens: 4 }))
            assert.isFalse(yield* fitsNow(limiter, { tokens: 1 }))
            yield* TestClock.adjust("1 second")
            const over = yield* limiter.reserve({ cost: { tokens: 1 } })
            yield* over.settle({ tokens: 4 })
            assert.isTrue(yield* fitsNow(limiter, { tokens: 1 }))
            assert.isFalse(yield* fitsNow(limiter, { tokens: 1 }))
          })
        ))

      it.scoped("sliding window: a debt of 10^9 units fills the window for one window length, then leaves", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [tokens(5, { algorithm: "sliding-window", burst: undefined })]
            })
            const reservation = yield* limiter.reserve({ cost: { tokens: 1 } })
            // the upstream's usage is whatever it says: logging it unit by unit took minutes (Redis)
            // or ended the process (memory)
            yield* reservation.settle({ tokens: 1_000_000_000 })
            assert.strictEqual(yield* waitFor(limiter, { tokens: 1 }), 1000)
            yield* TestClock.adjust("999 millis")
            assert.isFalse(yield* fitsNow(limiter, { tokens: 1 }))
            yield* TestClock.adjust("1 millis")
            assert.isTrue(yield* fitsNow(limiter, { tokens: 5 }))
            assert.isFalse(yield* fitsNow(limiter, { tokens: 1 }))
          })
        ))

      it.scoped("release: the latest reservation goes back exactly, an earlier one as a settle of nothing", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limits: [tokens(100)] })
            const first = yield* limiter.reserve({ cost: { tokens: 30 } })
            const second = yield* limiter.reserve({ cost: { tokens: 30 } })
            yield* second.release
            assert.strictEqual(yield* waitFor(limiter, { tokens: 100 }), 300)
            yield* first.release
            assert.isTrue(yield* fitsNow(limiter, { tokens: 100 }))
          })
        ))

      it.scoped("a reservation settles once: a second settle, or a release after it, is a no-op", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, { limits: [tokens(100)] })
            const reservation = yield* limiter.reserve({ cost: { tokens: 40 } })
            yield* reservation.settle({ tokens: 60 })
            yield* reservation.settle({ tokens: 0 })
            yield* reservation.release
            assert.strictEqual(yield* waitFor(limiter, { tokens: 100 }), 600)
          })
        ))

      it.scoped("a dimension the settle omits keeps its estimate", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [{ dimension: "input", limit: 100, window: "1 second", burst: 100 }, {
                dimension: "output",
                limit: 100,
                window: "1 second",
                burst: 100
              }]
            })
            const reservation = yield* limiter.reserve({ cost: { input: 50, output: 50 } })
            yield* reservation.settle({ input: 10 })
            assert.strictEqual(yield* waitFor(limiter, { input: 100 }), 100)
            assert.strictEqual(yield* waitFor(limiter, { output: 100 }), 500)
          })
        ))

      it.scoped("tighten: a lower remaining moves the state down, a higher one changes nothing", () =>
        withStore((store) =>
          Effect.gen(function*() {
            const limiter = yield* limiterOn(store, {
              limits: [
                { dimension: "requests", limit: 10, window: "1 second", burst: 10 },
                tokens(100),
                tokens(1000, { algorithm: "fixed-window", burst: undefined, window: "10 seconds" })
              ]
            })
            yield* limiter.take({ cost: { tokens: 50 } })
            // more than this limiter's view: nothing changes
            yield* limiter.tighten([{ dimension: "tokens", remaining: 90, limit: 100 }])
            assert.strictEqual(yield* waitFor(limiter, { tokens: 60 }), 100)
            // less: the tokens-per-second bucket holds 10
            yield* limiter.tighten([{ dimension: "tokens", remaining: 10, limit: 100 }])
            assert.strictEqual(yield* waitFor(limiter, { tokens: 11 }), 10)
            // an observation whose limit is nearest the 1,000 per 10 s window tightens that one
            yield* limiter.tighten([{ dimension: "tokens", remaining: 0, limit: 900 }])
            assert.strictEqual(yield* waitFor(limiter, { tokens: 1 }), 10_000)
            // the requests dimension is not affected
            assert.isTrue(yield* fitsNow(limiter, { requests: 1 }))
          })
        ))

      it.scoped("tighten: remaining 0 holds the dimension's starts until the reset, for every algorithm", () =>
        withStore((store) =>
          Effect.gen(function*() {
            for (const algorithm of ["gcra", "fixed-window", "sliding-window"] as const) {
              const limiter = yield* limiterOn(store, {
                limits: [
                  {
                    dimension: "requests",
                    limit: 10,
                    window: "1 second",
                    ...(algorithm === "gcra" ? { burst: 10 } : {})
                  },
                  { dimension: "tokens", limit: 100, window: "1 minute", algorithm }
                ]
              })
              yield* limiter.tighten([{ dimension: "tokens", remaining: 0, resetAfter: "6 seconds" }])
              // a take that charges no tokens does not wait for them
              assert.isTrue(yield* fitsNow(limiter, { requests: 1 }))
              const fiber = yield* taker(limiter, { cost: { requests: 1, tokens: 1 } })
              const before = yield* Clock.currentTimeMillis
              yield* TestClock.adjust("1 minute")
              const started = (yield* Fiber.join(fiber)) - before
              expect(started).toBeGreaterThanOrEqual(6000)
            }
          })
        ))

      it.scoped("tighten: an observation it cannot apply is ignored with a warning, a huge reset holds", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(1_700_000_000_000)
            const key = uniqueName("junk")
            const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
              { algorithm: "gcra", limit: 10, windowMillis: 1000, burst: 10 },
              { algorithm: "sliding-window", limit: 10, windowMillis: 1000, burst: 10 }
            ]
            const lines: Array<string> = []
            const logger = Logger.make(({ message }) => {
              lines.push(Array.isArray(message) ? message.join(" ") : String(message))
            })
            yield* store.tighten({
              key,
              limits,
              observations: [
                { limit: 5, remaining: 0, resetAfterMillis: 0 },
                { limit: 1, remaining: Number.NaN, resetAfterMillis: 0 },
                { limit: 1, remaining: 0, resetAfterMillis: -5 },
                { limit: 1, remaining: 0, resetAfterMillis: Number.POSITIVE_INFINITY },
                null as unknown as RateLimiterStore.Observation,
                // IETF's t=999999999999999, as the store would have been given it
                { limit: 0, remaining: 0, resetAfterMillis: 999_999_999_999_999_000 }
              ]
            }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
            assert.strictEqual(lines.length, 1)
            assert.include(lines[0], `tighten of ${JSON.stringify(key)} ignored {"limit":5`)
            assert.include(lines[0], "resetAfterMillis (a finite number ≥ 0)")
            const held = yield* store.reserve({ key, limits, cost: 1, costs: [1, 0], maxWaitMillis: 0 })
            assert(held._tag === "Refused")
            expect(held.delayMillis).toBeGreaterThan(1e17)
            // the sliding window was told nothing it could apply
            const free = yield* store.reserve({ key, limits, cost: 10, costs: [0, 10], maxWaitMillis: 0 })
            assert.strictEqual(free._tag, "Reserved")
          })
        ))

      it.scoped("the store interface: settle and tighten take plain data", () =>
        withStore((store) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(1_700_000_000_000)
            const key = uniqueName("raw")
            const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
              { algorithm: "gcra", limit: 10, windowMillis: 1000, burst: 10 },
              { algorithm: "fixed-window", limit: 100, windowMillis: 60_000, burst: 100 }
            ]
            const request = {
              key,
              limits,
              cost: 8,
              costs: [1, 8],
              maxWaitMillis: Number.POSITIVE_INFINITY
            }
            const r = yield* store.reserve(request)
            assert(r._tag === "Reserved")
            assert.strictEqual(r.delayMillis, 0)
            yield* store.settle({
              key,
              limits,
              reservation: r.reservation,
              restore: r.restore,
              reserved: [1, 8],
              actual: [1, 100]
            })
            const refused = yield* store.reserve({ ...request, cost: 1, costs: [0, 1], maxWaitMillis: 0 })
            assert(refused._tag === "Refused")
            assert.strictEqual(refused.binding, 1)
            yield* store.tighten({ key, limits, observations: [{ limit: 0, remaining: 0, resetAfterMillis: 2500 }] })
            const held = yield* store.reserve({ ...request, cost: 1, costs: [1, 0], maxWaitMillis: 0 })
            assert(held._tag === "Refused")
            assert.strictEqual(held.binding, 0)
            assert.strictEqual(held.delayMillis, 2500)
          })
        ))
    })
  }
}
