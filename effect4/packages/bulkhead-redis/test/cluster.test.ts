/**
 * The distributed bulkhead's core tests on a real Redis Cluster (three masters with a replica each,
 * started here), through ioredis `Cluster` clients given to `RedisConnection`: every key of a name
 * in one slot, `SPUBLISH` from a script on the slot's node, `NOSCRIPT` answered on every node, and
 * a failover of the name's shard while calls run.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { type RedisCluster, startCluster } from "../../../../core/testing/cluster.js"
import { RedisBulkhead } from "../src/index.js"
import {
  bulkheadOn,
  clusterClient,
  clusterInspector,
  eventually,
  expectClean,
  hold,
  probe,
  stateOf,
  uniqueName,
  waitingIs
} from "./utils/helpers.js"

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await startCluster()
}, 120_000)
afterAll(async () => {
  await cluster?.stop()
})

/** A connection of its own over a Cluster client: another process, for Redis. */
const onCluster = (options: RedisBulkhead.Options) =>
  Effect.flatMap(clusterClient(cluster.nodes), (client) => bulkheadOn(RedisConnection.layer({ client }), options))

const inspectorClient = Effect.suspend(() => clusterInspector(cluster.nodes))

describe("on a Redis Cluster", () => {
  it.live("every key of a name hashes to one slot, and names spread over the masters", () =>
    Effect.gen(function*() {
      const redis = yield* inspectorClient
      const nodes = new Set<string>()
      for (let i = 0; i < 12; i++) {
        const { channel, keys } = RedisBulkhead.keysOf("sluice:bh:", uniqueName("slot"))
        const slots = yield* Effect.promise(() =>
          Promise.all([...keys, channel].map((key) => redis.cluster("KEYSLOT", key) as Promise<number>))
        )
        assert.strictEqual(new Set(slots).size, 1)
        const node = redis.slots[slots[0]]?.[0]
        if (node !== undefined) nodes.add(node)
      }
      assert.isAtLeast(nodes.size, 2)
    }))

  it.live("K is never exceeded across two Cluster clients, for names on several masters", () =>
    Effect.gen(function*() {
      const redis = yield* inspectorClient
      for (let round = 0; round < 3; round++) {
        const name = uniqueName("cbound")
        const a = yield* onCluster({ name, permits: 3 })
        const b = yield* onCluster({ name, permits: 3 })
        const { call: probed, counts } = probe()
        const call = probed(1, 3)
        yield* Effect.forEach(
          Array.from({ length: 30 }, (_, i) => i),
          (i) => (i % 2 === 0 ? a : b).run(call),
          { concurrency: "unbounded", discard: true }
        )
        assert.strictEqual(counts.peak, 3)
        yield* expectClean(redis, name)
      }
    }))

  it.live("FIFO across clients, a heavy head not overtaken, grants told by SPUBLISH", () =>
    Effect.gen(function*() {
      const name = uniqueName("cfifo")
      const redis = yield* inspectorClient
      // a long lease: only the grant messages can wake the waiters within the test
      const a = yield* onCluster({ name, permits: 2, leaseTtl: "60 seconds" })
      const b = yield* onCluster({ name, permits: 2, leaseTtl: "60 seconds" })
      const log: Array<string> = []
      const first = yield* hold(a, { permits: 1 }, log, "first")
      yield* Deferred.await(first.started)
      const heavy = yield* hold(b, { permits: 2 }, log, "heavy")
      yield* eventually(waitingIs(a, 1), "heavy queued")
      const light = yield* hold(a, { permits: 1 }, log, "light")
      yield* eventually(waitingIs(a, 2), "light queued")
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(heavy.started)
      assert.isFalse(yield* Deferred.isDone(light.started))
      yield* Deferred.succeed(heavy.finish, undefined)
      yield* Deferred.await(light.started)
      yield* Deferred.succeed(light.finish, undefined)
      yield* Fiber.join(light.fiber)
      assert.deepStrictEqual(log, ["first", "heavy", "light"])
      yield* expectClean(redis, name)
    }))

  it.live("interruption while queued and while holding leaves no ticket and no lease", () =>
    Effect.gen(function*() {
      const name = uniqueName("cint")
      const redis = yield* inspectorClient
      const a = yield* onCluster({ name, permits: 1 })
      const b = yield* onCluster({ name, permits: 1 })
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const waiter = yield* hold(b)
      yield* eventually(waitingIs(a, 1), "waiter queued")
      yield* Fiber.interrupt(waiter.fiber)
      assert.deepStrictEqual((yield* stateOf(redis, name)).queue, [])
      yield* Fiber.interrupt(first.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a dead holder's permits pass on at the end of its lease", () =>
    Effect.gen(function*() {
      const name = uniqueName("cexpiry")
      const redis = yield* inspectorClient
      const scope = yield* Scope.make()
      const dying = yield* Effect.provideService(
        onCluster({ name, permits: 1, leaseTtl: "600 millis" }),
        Scope.Scope,
        scope
      )
      const b = yield* onCluster({ name, permits: 1, leaseTtl: "600 millis" })
      const holder = yield* hold(dying)
      yield* Deferred.await(holder.started)
      const waiter = yield* hold(b)
      yield* eventually(waitingIs(b, 1), "waiter queued")
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(waiter.started)
      yield* Deferred.succeed(waiter.finish, undefined)
      yield* Fiber.join(waiter.fiber)
      yield* Fiber.interrupt(holder.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("NOSCRIPT on every master (a failover's new master) is answered", () =>
    Effect.gen(function*() {
      const name = uniqueName("cnoscript")
      const redis = yield* inspectorClient
      const a = yield* onCluster({ name, permits: 1 })
      assert.strictEqual(yield* a.run(Effect.succeed(1)), 1)
      yield* Effect.promise(() => Promise.all(redis.nodes("master").map((node) => node.script("FLUSH"))))
      assert.strictEqual(yield* a.run(Effect.succeed(2)), 2)
      yield* expectClean(redis, name)
    }))

  it.live("a failover mid-run (CLUSTER FAILOVER on the name's replica): K holds, only store errors, NOSCRIPT answered", () =>
    Effect.gen(function*() {
      const name = uniqueName("cfailover")
      const redis = yield* inspectorClient
      const options = { name, permits: 3, leaseTtl: "3 seconds" } as const
      const a = yield* onCluster(options)
      const b = yield* onCluster(options)
      const { call: probed, counts } = probe()
      const call = probed(1, 5)
      let running = true
      let ran = 0
      const errors: Array<string> = []
      const worker = (bulkhead: RedisBulkhead.RedisBulkhead) =>
        Effect.gen(function*() {
          while (running) {
            const result = yield* Effect.result(bulkhead.run(call))
            if (result._tag === "Success") ran++
            else errors.push(result.failure._tag)
          }
        })
      const workers = yield* Effect.forkChild(
        Effect.all(Array.from({ length: 8 }, (_, i) => worker(i % 2 === 0 ? a : b)), {
          concurrency: "unbounded",
          discard: true
        })
      )
      yield* eventually(Effect.sync(() => ran >= 20), "calls before the failover")
      const { keys } = RedisBulkhead.keysOf("sluice:bh:", name)
      const { to } = yield* Effect.promise(() => cluster.failover(keys[0]))
      const atFailover = ran
      yield* eventually(Effect.sync(() => ran >= atFailover + 20), "calls after the failover")
      running = false
      yield* Fiber.join(workers)
      assert.isAtMost(counts.peak, 3)
      // a command that timed out while the shard changed hands fails closed, and nothing else
      assert.deepStrictEqual([...new Set(errors)].filter((tag) => tag !== "BulkheadStoreError"), [])
      // a grant whose reply was lost is a lease nobody renews: it ends within the TTL
      yield* eventually(
        Effect.map(stateOf(redis, name), (s) => s.used === 0 && s.wanted === 0 && s.held.length === 0),
        "every lease given back or expired"
      )
      yield* expectClean(redis, name)
      // the new master had no script cache: its first call was NOSCRIPT, answered by EVAL
      assert.match(yield* Effect.promise(() => cluster.info(to, "commandstats")), /cmdstat_eval:calls=[1-9]/)
    }))
})
