/**
 * Lanes through a provider, on `TestClock`: `Provider.withLane` and the call's `lane` option pick
 * the bulkhead lane, and `stats.lanes` reports each lane's attempts, permit wait and share.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { Cause, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, now, uniqueName, yieldTurns } from "./utils.js"

const priority = BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } })

/** The clock `steps` times by `millis`, each step letting the calls it ends hand their permits on. */
const advance = (steps: number, millis: number) =>
  Effect.repeat(Effect.andThen(TestClock.adjust(millis), yieldTurns(20)), { times: steps - 1 })

describe("Provider lanes", () => {
  it.effect("withLane puts every call of an effect in its lane: an interactive call passes the batch's queue", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("lanes"),
        bulkhead: { permits: 2, lanes: priority }
      })
      const began = yield* now
      const starts = new Map<string, number>()
      const call = (id: string) =>
        provider.call(
          Effect.andThen(Effect.flatMap(now, (t) => Effect.sync(() => starts.set(id, t))), Effect.sleep(100))
        )
      // 20 batch calls (no lane: the last lane declared) hold 2 permits and queue 18
      const batch = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Effect.forkChild(call(`b${i}`))
      )
      yield* yieldTurns()
      yield* TestClock.adjust(50)
      // a forked fiber inherits the lane; the call inside makes its own call through the provider
      const interactive = yield* Effect.forkChild(
        Effect.flatMap(Effect.forkChild(call("i")), Fiber.join).pipe(Provider.withLane("interactive"))
      )
      // the call's own option wins over withLane
      const pinned = yield* Effect.forkChild(
        provider.call(Effect.sync(() => starts.set("pinned", -1)), { lane: "batch" }).pipe(
          Provider.withLane("interactive")
        )
      )
      yield* yieldTurns()
      yield* advance(22, 50)
      yield* Fiber.join(interactive)
      yield* Fiber.join(pinned)
      yield* Effect.forEach(batch, Fiber.join)
      // one permit time after the batch began: the 18 queued batch calls do not count
      assert.strictEqual((starts.get("i") ?? Infinity) - began, 100)
      const stats = yield* provider.stats
      const lanes = stats.lanes ?? []
      assert.deepStrictEqual(lanes.map((lane) => [lane.lane, lane.attempts, lane.waiting]), [
        ["interactive", 1, 0],
        ["batch", 21, 0]
      ])
      const [fast, slow] = lanes
      assert.strictEqual(fast.permitWait.p95Millis, 50)
      // the batch's last call waited 9 rounds of 100 ms, plus the one the interactive call took
      assert.strictEqual(slow.permitWait.count, 21)
      assert.strictEqual(slow.permitWait.p95Millis, 950)
      assert.strictEqual(
        fast.reason,
        `lane "interactive": 1 attempt, 5 % of the permits; permit wait p50 50 ms, p95 50 ms`
      )
      assert.strictEqual(
        slow.reason,
        `lane "batch": 21 attempts, 95 % of the permits; permit wait p50 500 ms, p95 950 ms`
      )
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("fair share: each lane's share of the permits against its weight's, in stats and in one sentence", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("tenants"),
        bulkhead: { permits: 4, lanes: BulkheadLanes.fairShare({ weights: { a: 3, b: 1 } }) }
      })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 80 }, (_, i) => i),
        (i) => Effect.forkChild(provider.call(Effect.sleep(10), { lane: i % 2 === 0 ? "a" : "b" }))
      )
      yield* yieldTurns()
      // the first 4 calls took free permits (2 each); then 10 rounds of 4 while both lanes are
      // busy: 30 to a, 10 to b
      yield* advance(10, 10)
      const mid = (yield* provider.stats).lanes ?? []
      assert.deepStrictEqual(mid.map((lane) => [lane.lane, lane.attempts, lane.weightShare, lane.waiting]), [
        ["a", 32, 0.75, 8],
        ["b", 12, 0.25, 28]
      ])
      assert.strictEqual(
        mid[0].reason,
        `lane "a": 32 attempts, 73 % of the permits for a weight of 75 %; permit wait p50 50 ms, p95 100 ms`
      )
      yield* advance(20, 10)
      yield* Effect.forEach(fibers, Fiber.join)
      const end = (yield* provider.stats).lanes ?? []
      // idle now: no share is due
      assert.deepStrictEqual(end.map((lane) => [lane.lane, lane.attempts, lane.share, lane.weightShare]), [
        ["a", 40, 0.5, undefined],
        ["b", 40, 0.5, undefined]
      ])
    }))

  it.effect("a lane's maxWait holds under a total budget; the total's TotalTimeout when it ends first", () =>
    Effect.gen(function*() {
      const name = uniqueName("budgets")
      const provider = yield* Provider.make({
        name,
        totalTimeout: "30 seconds",
        bulkhead: {
          permits: 1,
          lanes: BulkheadLanes.priority({ interactive: { maxWait: "2 seconds" }, batch: { yieldFor: "30 seconds" } })
        }
      })
      const holder = yield* Effect.forkChild(provider.call(Effect.never))
      yield* yieldTurns()
      const began = yield* now
      const chat = yield* Effect.forkChild(
        Effect.flip(provider.call(Effect.void).pipe(Provider.withLane("interactive")))
      )
      yield* yieldTurns()
      yield* advance(3, 1_000)
      const error = yield* Fiber.join(chat)
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      assert.include(String(error), `PermitWaitTimeout: bulkhead "${name}" lane "interactive" gave up after waiting 2s`)
      assert.isAtMost((yield* now) - began, 3_000)
      // a call whose total ends before its lane's budget: TotalTimeout, as without lanes
      const late = yield* Effect.forkChild(
        Effect.flip(provider.call(Effect.void, { lane: "interactive", totalTimeout: "1 second" }))
      )
      yield* yieldTurns()
      yield* advance(2, 1_000)
      assert.strictEqual((yield* Fiber.join(late))._tag, "TotalTimeout")
      yield* Fiber.interrupt(holder)
    }))

  it.effect("withLane's lane, unknown to a provider's priority lanes, is its default lane; a call's own is a defect", () =>
    Effect.gen(function*() {
      const geocoder = yield* Provider.make({
        name: uniqueName("geocoder"),
        bulkhead: { permits: 1, lanes: BulkheadLanes.priority({ user: {}, backfill: { yieldFor: "1 minute" } }) }
      })
      yield* geocoder.call(Effect.void).pipe(Provider.withLane("interactive"))
      assert.deepStrictEqual((yield* geocoder.stats).lanes?.map((lane) => [lane.lane, lane.attempts]), [
        ["user", 0],
        ["backfill", 1]
      ])
      const exit = yield* Effect.exit(geocoder.call(Effect.void, { lane: "interactive" }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    }))

  it.effect("an undeclared lane is a defect naming the provider's bulkhead and its lanes", () =>
    Effect.gen(function*() {
      const name = uniqueName("typo")
      const provider = yield* Provider.make({ name, bulkhead: { permits: 1, lanes: priority } })
      const exit = yield* Effect.exit(provider.call(Effect.void, { lane: "chat" }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.include(
        String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""),
        `bulkhead "${name}": no lane "chat" (its lanes: interactive, batch)`
      )
      assert.strictEqual((yield* provider.stats).lanes?.[0].attempts, 0)
    }))

  it.effect("a provider whose bulkhead has no lanes ignores them and reports none", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("plain"), bulkhead: { permits: 1 } })
      yield* provider.call(Effect.void, { lane: "anything" }).pipe(Provider.withLane("interactive"))
      const stats = yield* provider.stats
      assert.strictEqual(stats.calls, 1)
      assert.isUndefined(stats.lanes)
      assert.isUndefined(provider.bulkhead.laneOf)
    }))
})
