/**
 * The store on a real Redis Cluster (three masters with a replica each, started here), through
 * `RedisConnection`: the contract's vectors, as on one server; several limiters on several masters
 * shared by two Cluster clients; and a `CLUSTER FAILOVER` of a limiter's shard while takes run
 * (only the typed store-down policy's errors, the quota still honoured, the new master's
 * `NOSCRIPT` answered).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { RateLimiter } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { RedisConnection } from "@sluice/redis"
import { Effect, Fiber, Layer, Result } from "effect"
import { Cluster } from "ioredis"
import { type RedisCluster, startCluster } from "../../../../core/testing/cluster.js"
import { storeVectors } from "../../rate-limiter/test/contract/driver.js"
import { clusterClient, clusterInspector } from "../../redis/test/utils.js"
import { uniquePrefix } from "./utils.js"

let cluster: RedisCluster
/** One Cluster client for the contract suite, as an application would share it. */
let shared: Cluster
beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 })
  shared = new Cluster([...cluster.nodes], {
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0, commandTimeout: 1000 }
  })
  shared.on("error", () => {})
  await new Promise((resolve) => shared.once("ready", resolve))
}, 120_000)
afterAll(async () => {
  await shared?.quit().catch(() => shared.disconnect())
  await cluster?.stop()
})

// As against one server (see RedisRateLimiterStore.contract.test.ts): one test at a time, and the
// caller's TestClock injected into the scripts. Each test builds the store afresh on the shared
// Cluster client, which the store leaves open.
storeVectors(
  "redis cluster (client clock)",
  Layer.suspend(() =>
    RedisRateLimiterStore.layerFromConnection({ prefix: uniquePrefix("ccontract"), clock: "client" }).pipe(
      Layer.provide(RedisConnection.layer({ client: shared }))
    )
  )
)

/** A store on a Cluster client of its own: another process, for Redis. */
const storeOnCluster = (options: RedisRateLimiterStore.StoreOptions) =>
  Effect.flatMap(
    clusterClient(cluster.nodes),
    (client) =>
      Effect.flatMap(
        Layer.build(RedisConnection.layer({ client })),
        (context) => Effect.provide(RedisRateLimiterStore.makeFromConnection(options), context)
      )
  )

describe("on a Redis Cluster", () => {
  it.live("two clients sharing limiters on every master never exceed a quota together", () =>
    Effect.gen(function*() {
      const inspect = yield* clusterInspector(cluster.nodes)
      const prefix = uniquePrefix("cshare")
      const one = yield* storeOnCluster({ prefix })
      const two = yield* storeOnCluster({ prefix })
      const masters = new Set<string>()
      for (let i = 0; i < 6; i++) {
        const name = `shared-${i}`
        const [state] = RedisRateLimiterStore.keysOf(prefix, name, 1)
        const slot = (yield* Effect.promise(() => inspect.cluster("KEYSLOT", state))) as number
        const node = inspect.slots[slot]?.[0]
        if (node !== undefined) masters.add(node)
        // 10 per hour, fixed window: 40 takes from two processes, 10 let through, whatever the timing
        const settings = { name, limit: 10, window: "1 hour", algorithm: "fixed-window", maxWait: 0 } as const
        const a = yield* RateLimiter.make({ ...settings, store: one })
        const b = yield* RateLimiter.make({ ...settings, store: two })
        const results = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, j) => (j % 2 === 0 ? a : b).take()),
          Effect.result,
          { concurrency: 8 }
        )
        assert.strictEqual(results.filter(Result.isSuccess).length, 10)
        const refused = results.flatMap((r) => Result.isFailure(r) ? [r.failure._tag] : [])
        assert.deepStrictEqual([...new Set(refused)], ["RateLimitExceeded"])
      }
      assert.isAtLeast(masters.size, 2)
    }))

  it.live("a failover mid-run: only RateLimiterStoreError, the quota honoured, NOSCRIPT answered", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("cfailover")
      const one = yield* storeOnCluster({ prefix, storeDown: "fail-closed" })
      const two = yield* storeOnCluster({ prefix, storeDown: "fail-closed" })
      // 50 per second, 5 at once: any span of T seconds holds at most 5 + 50·T starts (+ 1)
      const settings = { name: "failover", limit: 50, window: "1 second", burst: 5, maxWait: 0 } as const
      const limiters = [
        yield* RateLimiter.make({ ...settings, store: one }),
        yield* RateLimiter.make({ ...settings, store: two })
      ]
      let running = true
      let granted = 0
      const errors = new Map<string, number>()
      const taker = (limiter: RateLimiter.RateLimiter) =>
        Effect.gen(function*() {
          while (running) {
            const result = yield* Effect.result(limiter.take())
            if (Result.isSuccess(result)) granted++
            else errors.set(result.failure._tag, (errors.get(result.failure._tag) ?? 0) + 1)
            yield* Effect.sleep("2 millis")
          }
        })
      const started = Date.now()
      const takers = yield* Effect.forkChild(
        Effect.all(Array.from({ length: 6 }, (_, i) => taker(limiters[i % 2])), {
          concurrency: "unbounded",
          discard: true
        })
      )
      yield* Effect.sleep("300 millis")
      const [state] = RedisRateLimiterStore.keysOf(prefix, "failover", 1)
      const { to } = yield* Effect.promise(() => cluster.failover(state))
      const atFailover = granted
      yield* Effect.sleep("500 millis")
      running = false
      yield* Fiber.join(takers)
      const seconds = (Date.now() - started) / 1000
      assert.isAbove(granted, atFailover, "takes granted after the failover")
      // every grant happened within the run: the quota over the run's span bounds them all
      assert.isAtMost(granted, 5 + Math.ceil(50 * seconds) + 1)
      assert.isAbove(errors.get("RateLimitExceeded") ?? 0, 0, "the limit was binding")
      assert.deepStrictEqual(
        [...errors.keys()].filter((tag) => tag !== "RateLimitExceeded" && tag !== "RateLimiterStoreError"),
        []
      )
      // the new master had no script cache: its first take was NOSCRIPT, answered by one EVAL
      assert.match(yield* Effect.promise(() => cluster.info(to, "commandstats")), /cmdstat_eval:calls=[1-9]/)
    }))
})
