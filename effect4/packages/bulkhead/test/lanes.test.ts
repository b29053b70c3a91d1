/**
 * Lanes on `TestClock`: the bounds of docs/semantics.md ("Lanes"), the shares, the per-lane
 * refusals and the options' messages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Cause, Clock, Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, uniqueName, yieldTurns } from "./utils.js"

/** A call that takes `millis` of the test clock and records when it started. */
const timed = (starts: Map<string, number>, id: string, millis: number) =>
  Effect.andThen(
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => starts.set(id, now))),
    Effect.sleep(millis)
  )

/**
 * The clock `steps` times by `millis`, each step letting the calls it ends hand their permits on
 * (the calls of a test last a whole number of steps, so each step ends some exactly).
 */
const advance = (steps: number, millis: number) =>
  Effect.forEach(Array.from({ length: steps }), () => Effect.andThen(TestClock.adjust(millis), yieldTurns(20)), {
    discard: true
  })

const priorityLanes = BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } })

describe("lanes", () => {
  describe("priority", () => {
    it.effect("an interactive call behind a saturated batch waits one permit time, not the batch's queue", () =>
      Effect.gen(function*() {
        const run = (lanes: BulkheadLanes.Lanes | undefined) =>
          Effect.gen(function*() {
            const bulkhead = yield* Bulkhead.make({
              name: uniqueName("lanes"),
              permits: 2,
              ...(lanes === undefined ? {} : { lanes })
            })
            const starts = new Map<string, number>()
            const began = yield* Clock.currentTimeMillis
            // 20 batch calls of 100 ms: 2 hold the permits, 18 queue
            for (let i = 0; i < 20; i++) {
              yield* Effect.forkChild(bulkhead.run(timed(starts, `b${i}`, 100), { lane: "batch" }))
            }
            yield* yieldTurns(20)
            yield* TestClock.adjust("50 millis")
            const interactive = yield* Effect.forkChild(bulkhead.run(timed(starts, "i", 100), { lane: "interactive" }))
            yield* yieldTurns(20)
            yield* advance(22, 50)
            yield* Fiber.join(interactive)
            yield* expectIdle(bulkhead)
            return (starts.get("i") ?? Infinity) - began
          })
        // A = 100 ms, c = 1, K = 2: A · ⌈c / K⌉ = 100 ms after the batch began, 50 ms after it came
        assert.strictEqual(yield* run(priorityLanes), 100)
        // one queue: behind the 18 queued batch calls, 9 rounds of 100 ms
        assert.strictEqual(yield* run(undefined), 1_000)
      }))

    it.effect(
      "a batch call waits its yieldFor plus one permit time however many interactive calls come",
      () =>
        Effect.gen(function*() {
          const bulkhead = yield* Bulkhead.make({
            name: uniqueName("lanes"),
            permits: 1,
            lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 second" } })
          })
          const starts = new Map<string, number>()
          // an interactive call of 10 ms holds the permit; another arrives every 10 ms, for 1.5 s
          yield* Effect.forkChild(bulkhead.run(timed(starts, "i0", 10), { lane: "interactive" }))
          yield* yieldTurns(10)
          const batch = yield* Effect.forkChild(bulkhead.run(timed(starts, "b", 10), { lane: "batch" }))
          yield* yieldTurns(10)
          for (let i = 1; i <= 150; i++) {
            yield* Effect.forkChild(bulkhead.run(timed(starts, `i${i}`, 10), { lane: "interactive" }))
            yield* yieldTurns(10)
            yield* TestClock.adjust("10 millis")
          }
          yield* Fiber.join(batch)
          // due at 1,000 ms: the interactive calls due no later and still waiting go first (the one
          // queued at 990 starts at 1,000; the one queued at 1,000 wins the tie, at 1,010), then the
          // batch call, within 1,000 + A · ⌈(2 + 1) / 1⌉
          assert.strictEqual(starts.get("b"), 1_020)
          assert.isAtMost(starts.get("b") ?? Infinity, 1_000 + 10 * 3)
          yield* advance(5, 10)
          yield* expectIdle(bulkhead)
        }),
      30_000
    )

    it.effect("each lane's maxWaiting and maxWait refuse with errors that name the lane", () =>
      Effect.gen(function*() {
        const name = uniqueName("lanes")
        const bulkhead = yield* Bulkhead.make({
          name,
          permits: 1,
          lanes: BulkheadLanes.priority({
            interactive: { maxWait: "200 millis" },
            batch: { yieldFor: "1 minute", maxWaiting: 1 }
          })
        })
        yield* Effect.forkChild(bulkhead.run(Effect.never, { lane: "batch" }))
        yield* yieldTurns(10)
        yield* Effect.forkChild(bulkhead.run(Effect.void, { lane: "batch" }))
        yield* yieldTurns(10)
        const full = yield* Effect.flip(bulkhead.run(Effect.void, { lane: "batch" }))
        assert.strictEqual(full._tag, "BulkheadFull")
        assert.strictEqual(full.lane, "batch")
        assert.strictEqual(full._tag === "BulkheadFull" ? full.bound : undefined, "lane")
        assert.strictEqual(
          full.message,
          `bulkhead "${name}" lane "batch" is full: 1 of 1 permits in use and 1 caller queued (maxWaiting 1); ` +
            "refused a call for 1 permit"
        )
        // the interactive lane is not full: it waits, on its own budget
        const waiting = yield* Effect.forkChild(Effect.flip(bulkhead.run(Effect.void, { lane: "interactive" })))
        yield* yieldTurns(10)
        yield* TestClock.adjust("200 millis")
        const timeout = yield* Fiber.join(waiting)
        assert.strictEqual(timeout._tag, "PermitWaitTimeout")
        assert.strictEqual(timeout.lane, "interactive")
        assert.isTrue(
          String(timeout).startsWith(
            `PermitWaitTimeout: bulkhead "${name}" lane "interactive" gave up after waiting 200ms`
          ),
          String(timeout)
        )
        const stats = yield* bulkhead.stats
        assert.deepStrictEqual(stats.lanes, [
          { name: "interactive", waiting: 0, waitingPermits: 0, granted: 0 },
          { name: "batch", waiting: 1, waitingPermits: 1, granted: 1 }
        ])
      }))

    it.effect("a call the policy would grant at once is granted, with maxWait 0 or its queue full", () =>
      Effect.gen(function*() {
        const name = uniqueName("lanes")
        const bulkhead = yield* Bulkhead.make({
          name,
          permits: 4,
          maxWaiting: 1,
          lanes: BulkheadLanes.priority({
            interactive: { maxWaiting: 0 },
            batch: { yieldFor: "30 seconds" }
          })
        })
        // 2 of 4 permits held; a batch call for 4 waits (due in 30 s), filling the bulkhead's queue
        yield* Effect.forkChild(bulkhead.run(Effect.never, { lane: "batch", permits: 2 }))
        yield* yieldTurns(10)
        yield* Effect.forkChild(bulkhead.run(Effect.never, { lane: "batch", permits: 4 }))
        yield* yieldTurns(10)
        assert.include(yield* bulkhead.stats, { inFlight: 2, waiting: 1 })
        // an interactive call ranks ahead of the heavy batch waiter and its permits are free: the
        // lane's maxWaiting 0, the bulkhead's full queue and a zero budget do not refuse it
        assert.strictEqual(yield* bulkhead.run(Effect.succeed("now"), { lane: "interactive" }), "now")
        assert.strictEqual(
          yield* bulkhead.run(Effect.succeed("now"), { lane: "interactive", maxWait: 0 }),
          "now"
        )
        // a batch call would wait behind the heavy one: refused, by the bulkhead's bound, saying so
        const full = yield* Effect.flip(bulkhead.run(Effect.void, { lane: "batch" }))
        assert.strictEqual(full._tag === "BulkheadFull" ? full.bound : undefined, "bulkhead")
        assert.strictEqual(
          full.message,
          `bulkhead "${name}" is full: 2 of 4 permits in use and 1 caller queued in all its lanes (maxWaiting 1); ` +
            `refused a call for 1 permit in lane "batch"`
        )
        // an interactive call that would wait (3 permits, 2 free) meets its lane's maxWaiting 0
        const heavy = yield* Effect.flip(bulkhead.run(Effect.void, { lane: "interactive", permits: 3 }))
        assert.strictEqual(heavy._tag === "BulkheadFull" ? heavy.bound : undefined, "lane")
        assert.include(yield* bulkhead.stats, { inFlight: 2, waiting: 1 })
        // a zero budget that would wait is told so, with a unit
        const plain = yield* Bulkhead.make({ name: uniqueName("zero"), permits: 1 })
        yield* Effect.forkChild(plain.run(Effect.never))
        yield* yieldTurns(10)
        const timeout = yield* Effect.flip(plain.run(Effect.void, { maxWait: 0 }))
        assert.include(timeout.message, "gave up after waiting 0ms for 1 of 1 permits")
      }))

    it.effect("a call without a lane goes to the last lane; a lane it does not declare is a defect", () =>
      Effect.gen(function*() {
        const name = uniqueName("lanes")
        const bulkhead = yield* Bulkhead.make({ name, permits: 1, lanes: priorityLanes })
        yield* bulkhead.run(Effect.void)
        assert.deepStrictEqual((yield* bulkhead.stats).lanes?.map((lane) => lane.granted), [0, 1])
        const exit = yield* Effect.exit(bulkhead.run(Effect.void, { lane: "chat" }))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
        assert.include(
          String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""),
          `no lane "chat" (its lanes: interactive, batch)`
        )
      }))
  })

  describe("fairShare", () => {
    it.effect(
      "weights 3:1 give shares within 5 % while both lanes are busy, and an idle lane's share goes to the other",
      () =>
        Effect.gen(function*() {
          const bulkhead = yield* Bulkhead.make({
            name: uniqueName("fair"),
            permits: 20,
            lanes: BulkheadLanes.fairShare({ weights: { a: 3 } })
          })
          const starts = new Map<string, number>()
          // 400 calls of 100 ms in each lane, all queued at once
          for (let i = 0; i < 400; i++) {
            yield* Effect.forkChild(bulkhead.run(timed(starts, `a${i}`, 100), { lane: "a" }))
            yield* Effect.forkChild(bulkhead.run(timed(starts, `b${i}`, 100), { lane: "b" }))
          }
          yield* yieldTurns(50)
          // 20 permits for 2 s: 400 grants, of which a takes 3 in 4
          yield* advance(19, 100)
          const mid = yield* bulkhead.stats
          const [a, b] = ["a", "b"].map((lane) => mid.lanes?.find((l) => l.name === lane)?.granted ?? 0)
          assert.strictEqual(a + b, 400)
          assert.isTrue(Math.abs(a / (a + b) - 0.75) <= 0.05 * 0.75, `a ${a}, b ${b}`)
          // a's queue runs dry first: from then on b takes every permit
          yield* advance(22, 100)
          const end = yield* bulkhead.stats
          assert.deepStrictEqual(end.lanes?.map((lane) => [lane.name, lane.granted, lane.waiting]), [
            ["a", 400, 0],
            ["b", 400, 0]
          ])
          const last = (lane: string) =>
            Math.max(...[...starts].filter(([id]) => id.startsWith(lane)).map(([, t]) => t))
          // 800 calls of 100 ms on 20 permits: 40 rounds, the last at 3,900 ms, all b's
          assert.isBelow(last("a"), last("b"))
          assert.strictEqual(last("b"), 3_900)
          yield* expectIdle(bulkhead)
        }),
      30_000
    )

    it.effect(
      "over 10,000 grants, 3:1 holds within 5 % and a lane that goes idle lends its share",
      () =>
        Effect.gen(function*() {
          const bulkhead = yield* Bulkhead.make({
            name: uniqueName("fair-10k"),
            permits: 32,
            lanes: BulkheadLanes.fairShare({ weights: { a: 3, b: 1, c: 2 } })
          })
          const granted = { a: 0, b: 0, c: 0 }
          const phase = { current: "all" as "all" | "c idle" }
          const counted = { all: { a: 0, b: 0, c: 0 }, "c idle": { a: 0, b: 0, c: 0 } }
          // Every call holds its permit until the test opens the gate of its step: a step ends
          // all 32 calls at once, as calls of equal length would (the shares need no clock).
          let gate = yield* Deferred.make<void>()
          const call = (lane: "a" | "b" | "c") =>
            bulkhead.run(
              Effect.suspend(() => {
                granted[lane]++
                counted[phase.current][lane]++
                return Deferred.await(gate)
              }),
              { lane }
            )
          // 80 callers per lane (more than twice the permits), each calling again as soon as its
          // call ends: no lane runs dry while its calls end, so every lane stays busy
          const callers = (lane: "a" | "b" | "c") =>
            Effect.forEach(Array.from({ length: 80 }), () => Effect.forkChild(Effect.forever(call(lane))))
          const a = yield* callers("a")
          const b = yield* callers("b")
          const c = yield* callers("c")
          yield* yieldTurns(20)
          const steps = (n: number) =>
            Effect.repeat(
              Effect.gen(function*() {
                const open = gate
                gate = yield* Deferred.make<void>()
                yield* Deferred.succeed(open, undefined)
                yield* yieldTurns(8)
              }),
              { times: n - 1 }
            )
          // 32 permits a step: 170 steps of all three, then 170 without c, 10,880 grants
          yield* steps(170)
          yield* Effect.forEach(c, Fiber.interrupt)
          phase.current = "c idle"
          yield* steps(170)
          yield* Effect.forEach([...a, ...b], Fiber.interrupt)
          const total = granted.a + granted.b + granted.c
          assert.isAtLeast(total, 10_000)
          const share = (counts: Record<"a" | "b" | "c", number>, lane: "a" | "b" | "c", weight: number) => {
            const sum = counts.a + counts.b + counts.c
            const achieved = counts[lane] / sum
            assert.isTrue(
              Math.abs(achieved - weight) <= 0.05 * weight,
              `${lane}: ${counts[lane]} of ${sum} (${(achieved * 100).toFixed(2)} %) for a weight of ${
                (weight * 100).toFixed(2)
              } %`
            )
          }
          share(counted.all, "a", 3 / 6)
          share(counted.all, "b", 1 / 6)
          share(counted.all, "c", 2 / 6)
          // c idle: its share goes to a and b, still 3:1
          assert.isAtMost(counted["c idle"].c, 32)
          share(counted["c idle"], "a", 3 / 4)
          share(counted["c idle"], "b", 1 / 4)
          yield* expectIdle(bulkhead)
        }),
      60_000
    )
  })

  describe("options", () => {
    const refused = (lanes: BulkheadLanes.Lanes, extra: Partial<Bulkhead.Options> = {}) => {
      try {
        Bulkhead.unsafeMake({ name: "opts", permits: 1, lanes, ...extra })
        return "accepted"
      } catch (error) {
        return String(error)
      }
    }

    it("refuses what would not mean what it says, naming the bulkhead and the lane", () => {
      assert.include(refused(BulkheadLanes.priority({})), `bulkhead "opts": lanes (priority) needs at least one lane`)
      assert.include(
        refused(BulkheadLanes.priority({ interactive: { yieldFor: "1 second" } })),
        `the first lane ("interactive") gives way to none, so it takes no yieldFor`
      )
      assert.include(refused(BulkheadLanes.priority({ interactive: {}, batch: {} })), `lane "batch" needs yieldFor`)
      assert.include(refused(BulkheadLanes.priority({ "1": {}, batch: { yieldFor: 0 } })), `must not be integers`)
      assert.include(
        refused(BulkheadLanes.priority({ ok: {}, ["b\uD800"]: { yieldFor: 0 } })),
        `bulkhead "opts": lane "b\\ud800" is not well-formed UTF-16 (a lone surrogate)`
      )
      assert.include(refused(BulkheadLanes.fairShare({ weights: { ["\uDC00t"]: 2 } })), `lane "\\udc00t" is not`)
      assert.strictEqual(refused(BulkheadLanes.fairShare({ weights: { "t\u{1F600}": 2 } })), "accepted")
      assert.include(refused(BulkheadLanes.priority({ a: {}, b: { yieldFor: -1 } })), `bulkhead "opts" lane "b"`)
      assert.include(refused(BulkheadLanes.fairShare({ weights: { a: 0 } })), `bulkhead "opts" lanes (fairShare)`)
      assert.include(refused(BulkheadLanes.fairShare({ defaultWeight: Number.NaN })), `defaultWeight`)
      assert.include(refused(BulkheadLanes.fairShare(), { order: "lifo" }), `lanes decide the order`)
      assert.strictEqual(refused(BulkheadLanes.fairShare({ weights: { a: 2.5 }, maxWaiting: 10 })), "accepted")
      // a lower lane that gave way for less would be served before the one above it
      assert.include(
        refused(BulkheadLanes.priority({ a: {}, b: { yieldFor: "1 minute" }, c: { yieldFor: "1 second" } })),
        `lane "c" gives way for 1000ms, less than "b" above it (60000ms)`
      )
      assert.strictEqual(
        refused(BulkheadLanes.priority({ a: {}, b: { yieldFor: "1 second" }, c: { yieldFor: "1 second" } })),
        "accepted"
      )
      // only array-index names are listed first by JavaScript
      assert.strictEqual(refused(BulkheadLanes.priority({ a: {}, "01": { yieldFor: 0 } })), "accepted")
      // a turn adds the weight to the credit: a tiny weight would spin through millions of turns
      assert.include(refused(BulkheadLanes.fairShare({ defaultWeight: 1e-9 })), `defaultWeight`)
      assert.include(refused(BulkheadLanes.fairShare({ weights: { a: 1e7 } })), `weights`)
    })
  })
})
