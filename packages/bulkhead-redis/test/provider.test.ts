/**
 * A Provider takes the distributed bulkhead as its bulkhead unchanged: two providers on two
 * connections (two processes, for Redis) share its permits, and its errors are the bulkhead's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { Deferred, Effect, Fiber } from "effect"
import { inject } from "vitest"
import { bulkheadOn, expectClean, inspector, probe, uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")

describe("with a Provider", () => {
  it.scopedLive("two providers share the fleet's permits and refuse with the bulkhead's errors", () =>
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
      const holders = yield* Effect.fork(
        Effect.all([pa.call(Deferred.await(gate)), pa.call(Deferred.await(gate))], { concurrency: "unbounded" })
      )
      yield* Effect.repeat(b.stats, { until: (s) => s.inFlight === 2 })
      const error = yield* Effect.flip(pb.call(Effect.void))
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holders)
      yield* expectClean(yield* inspector(url), name)
    }))
})
