/**
 * A Provider takes the distributed bulkhead as its bulkhead unchanged: two providers on two
 * connections (two processes, for Redis) share its permits, its errors are the bulkhead's, and a
 * `withLane` reaches the fleet's lanes.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { Deferred, Effect, Fiber } from "effect"
import { inject } from "vitest"
import { bulkheadOn, eventually, expectClean, hold, inspector, probe, stateOf, uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")

describe("with a Provider", () => {
  it.live("two providers share the fleet's permits and refuse with the bulkhead's errors", () =>
    Effect.gen(function*() {
      const name = uniqueName("provider")
      const a = yield* bulkheadOn(url, { name, permits: 2, maxWait: "150 millis" })
      const b = yield* bulkheadOn(url, { name, permits: 2, maxWait: "150 millis" })
      const pa = yield* Provider.make({ name, bulkhead: a.bulkhead })
      const pb = yield* Provider.make({ name, bulkhead: b.bulkhead })
      const { call: probed, counts } = probe()
      const call = probed(1, 5)
      // waits stay under maxWait: 2 permits, 20 calls of ~5 ms
      yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => (i % 2 === 0 ? pa : pb).call(call).pipe(Effect.retry({ times: 3 })),
        { concurrency: 4, discard: true }
      )
      assert.strictEqual(counts.peak, 2)
      // both permits held through one provider: the other's caller times out with PermitWaitTimeout
      const gate = yield* Deferred.make<void>()
      const holders = yield* Effect.forkChild(
        Effect.all([pa.call(Deferred.await(gate)), pa.call(Deferred.await(gate))], { concurrency: "unbounded" })
      )
      yield* Effect.repeat(b.stats, { until: (s) => s.inFlight === 2 })
      const error = yield* Effect.flip(pb.call(Effect.void))
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holders)
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("withLane reaches the fleet's lane queue: a provider's interactive call passes another process's batch call", () =>
    Effect.gen(function*() {
      const name = uniqueName("provider-lanes")
      const lanes = BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 hour" } })
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes })
      const b = yield* bulkheadOn(url, { name, permits: 1, lanes })
      const provider = yield* Provider.make({ name, bulkhead: a.bulkhead })
      const redis = yield* inspector(url)
      const log: Array<string> = []
      const queuedIs = (n: number) => Effect.map(stateOf(redis, name), (s) => s.queue.length === n)
      // the one permit held: a batch call of b, then the provider's call in the interactive lane, queue
      const gate = yield* hold(b, { lane: "batch" })
      yield* Deferred.await(gate.started)
      const batch = yield* Effect.forkChild(b.run(Effect.sync(() => void log.push("batch")), { lane: "batch" }))
      yield* eventually(queuedIs(1), "the batch call queued")
      const interactive = yield* Effect.forkChild(
        provider.call(Effect.sync(() => void log.push("interactive"))).pipe(Provider.withLane("interactive"))
      )
      yield* eventually(queuedIs(2), "the provider's call queued")
      const waiting = yield* a.stats
      assert.deepStrictEqual(waiting.lanes?.map((l) => [l.name, l.waiting]), [["interactive", 1], ["batch", 1]])
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
      yield* Fiber.join(batch)
      yield* Fiber.join(interactive)
      assert.deepStrictEqual(log, ["interactive", "batch"])
      // without withLane a provider's call takes the policy's default lane
      yield* provider.call(Effect.void)
      const after = yield* a.stats
      assert.deepStrictEqual(after.lanes?.map((l) => [l.name, l.granted]), [["interactive", 1], ["batch", 3]])
      yield* expectClean(redis, name)
    }))
})
