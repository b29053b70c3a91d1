/**
 * Effect 4's `PartitionedSemaphore` (unstable) beside the bulkhead's fair-share lanes, on one
 * scenario (RFC 0003 §4, RFC 0004): one permit, held; tenant a queues six calls, then tenant b
 * six; the holder lets go and every call runs at once. The semaphore serves the keys round-robin,
 * one call each, whatever the tenants are owed; the bulkhead's `fairShare` serves them by weight
 * (3:1 here), and without lanes in arrival order. If Effect's half ever fails, re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Deferred, Effect, Fiber, PartitionedSemaphore } from "effect"
import { uniqueName, yieldTurns } from "../utils.js"

const calls = [
  ...Array.from({ length: 6 }, (_, i) => ({ tenant: "a", id: `a${i + 1}` })),
  ...Array.from({ length: 6 }, (_, i) => ({ tenant: "b", id: `b${i + 1}` }))
]

describe("comparison: Effect 4's PartitionedSemaphore and the bulkhead's lanes", () => {
  it.effect("PartitionedSemaphore: one call per key in turn, no weights", () =>
    Effect.gen(function*() {
      const semaphore = yield* PartitionedSemaphore.make<string>({ permits: 1 })
      yield* semaphore.take("holder", 1)
      const order: Array<string> = []
      const fibers = yield* Effect.forEach(calls, ({ id, tenant }) =>
        Effect.tap(
          Effect.forkChild(semaphore.withPermit(tenant)(Effect.sync(() => order.push(id)))),
          () => yieldTurns(2)
        ))
      yield* semaphore.release(1)
      yield* Effect.forEach(fibers, Fiber.join)
      assert.deepStrictEqual(order, ["a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4", "a5", "b5", "a6", "b6"])
    }))

  const runBulkhead = (lanes: BulkheadLanes.Lanes | undefined) =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({
        name: uniqueName("vs-partitioned"),
        permits: 1,
        ...(lanes === undefined ? {} : { lanes })
      })
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(bulkhead.run(Deferred.await(release), { lane: "a" }))
      yield* yieldTurns()
      const order: Array<string> = []
      const fibers = yield* Effect.forEach(calls, ({ id, tenant }) =>
        Effect.tap(
          Effect.forkChild(
            bulkhead.run(Effect.sync(() => order.push(id)), lanes === undefined ? {} : { lane: tenant })
          ),
          () => yieldTurns(2)
        ))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Effect.forEach(fibers, Fiber.join)
      return order
    })

  it.effect("bulkhead fairShare: the tenants in proportion to their weights, 3:1", () =>
    Effect.gen(function*() {
      const order = yield* runBulkhead(BulkheadLanes.fairShare({ weights: { a: 3, b: 1 } }))
      // of the first eight grants, a gets six and b two; then b's rest
      const firstEight = order.slice(0, 8)
      assert.strictEqual(firstEight.filter((id) => id.startsWith("a")).length, 6)
      assert.strictEqual(firstEight.filter((id) => id.startsWith("b")).length, 2)
      assert.deepStrictEqual(order.slice(8), ["b3", "b4", "b5", "b6"])
    }))

  it.effect("bulkhead without lanes: arrival order, the flood first", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* runBulkhead(undefined), calls.map(({ id }) => id))
    }))
})
