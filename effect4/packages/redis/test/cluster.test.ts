/**
 * The connection on a real Redis Cluster (three masters, a replica each, started here): a Cluster
 * the layer opens (and closes) or the application's, scripts routed to their key's slot on every
 * master, `SCRIPT LOAD` on every master, shard-channel messages, and a failover mid-run: the new
 * master has no script cache (NOSCRIPT, answered by EVAL) and ioredis follows the MOVED replies.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import { Effect, Exit, Fiber, Result, Scope } from "effect"
import { Cluster } from "ioredis"
import { type RedisCluster, startCluster } from "../../../../core/testing/cluster.js"
import { closed, clusterClient, clusterInspector, inspector, keyOf } from "./utils.js"

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 })
}, 120_000)
afterAll(async () => {
  await cluster?.stop()
})

const incr = RedisConnection.script("incr", "return redis.call('INCRBY', KEYS[1], ARGV[1])")

describe("on a Redis Cluster", () => {
  it.live("a Cluster opened from its nodes runs scripts on every master, and is closed with its scope", () =>
    Effect.gen(function*() {
      const inspect = yield* clusterInspector(cluster.nodes)
      const scope = yield* Scope.make()
      const connection = yield* Effect.provideService(
        RedisConnection.make({ cluster: [cluster.nodes[0]] }),
        Scope.Scope,
        scope
      )
      assert.isTrue(connection.client instanceof Cluster)
      assert.isTrue(connection.isReady())
      const masters = new Set<string>()
      for (let i = 0; i < 12; i++) {
        const key = keyOf(`spread${i}`)
        assert.strictEqual(yield* connection.runScript(incr, [key], ["2"]), 2)
        const slot = (yield* Effect.promise(() => inspect.cluster("KEYSLOT", key))) as number
        const node = inspect.slots[slot]?.[0]
        if (node !== undefined) masters.add(node)
      }
      assert.strictEqual(masters.size, 3)
      yield* Scope.close(scope, Exit.void)
      yield* closed(connection.client)
    }))

  it.live("scripts are loaded on every master", () =>
    Effect.gen(function*() {
      const inspect = yield* clusterInspector(cluster.nodes)
      const lua = `return ${Date.now()}`
      const fresh = RedisConnection.script("fresh", lua)
      const connection = yield* RedisConnection.make({ client: yield* clusterClient(cluster.nodes) })
      yield* connection.loadScripts([fresh])
      const exists = yield* Effect.promise(() =>
        Promise.all(inspect.nodes("master").map((node) => node.script("EXISTS", fresh.sha)))
      )
      assert.deepStrictEqual(exists, [[1], [1], [1]])
    }))

  it.live("a message published on a shard channel of any slot reaches its handler", () =>
    Effect.gen(function*() {
      const connection = yield* RedisConnection.make({ client: yield* clusterClient(cluster.nodes) })
      const channels = Array.from({ length: 6 }, (_, i) => keyOf(`channel${i}`))
      const seen = new Set<string>()
      for (const channel of channels) yield* connection.subscribe(channel, (m) => seen.add(`${channel}=${m}`))
      for (const channel of channels) yield* Effect.promise(() => connection.client.spublish(channel, "hi"))
      for (let i = 0; seen.size < channels.length && i < 500; i++) yield* Effect.sleep("10 millis")
      assert.deepStrictEqual([...seen].sort(), channels.map((c) => `${c}=hi`).sort())
    }))

  it.live("a failover mid-run: scripts go on (MOVED followed, NOSCRIPT answered), no count lost or doubled", () =>
    Effect.gen(function*() {
      const inspect = yield* clusterInspector(cluster.nodes)
      const connection = yield* RedisConnection.make({ cluster: cluster.nodes })
      const key = keyOf("failover")
      yield* connection.loadScripts([incr])
      let ok = 0
      const failures: Array<string> = []
      let running = true
      const loop = Effect.gen(function*() {
        while (running) {
          const result = yield* Effect.result(connection.runScript(incr, [key], ["1"]))
          if (Result.isSuccess(result)) ok++
          else failures.push(result.failure.message)
          yield* Effect.sleep("2 millis")
        }
      })
      const fiber = yield* Effect.forkChild(loop)
      yield* Effect.sleep("200 millis")
      const { from, to } = yield* Effect.promise(() => cluster.failover(key))
      const okAtFailover = ok
      yield* Effect.sleep("300 millis")
      running = false
      yield* Fiber.await(fiber)
      assert.isAbove(ok, okAtFailover, `no script ran after the failover from ${from} to ${to}`)
      // every success counted once; a failure is a command that timed out, which may have run
      const stored = Number(yield* Effect.promise(() => inspect.get(key)))
      assert.isAtLeast(stored, ok)
      assert.isAtMost(stored, ok + failures.length)
      for (const failure of failures) assert.match(failure, /^Redis script incr failed/)
      // the new master had no script cache (a replica's is not filled by the master's SCRIPT LOAD):
      // the first call there was NOSCRIPT, answered by one EVAL, which cached it
      const stats = yield* Effect.promise(() => cluster.info(to, "commandstats"))
      assert.match(stats, /cmdstat_eval:calls=1,/)
      const node = yield* inspector(`redis://127.0.0.1:${to}`)
      assert.deepStrictEqual(yield* Effect.promise(() => node.script("EXISTS", incr.sha)), [1])
    }))
})
