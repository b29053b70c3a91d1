/**
 * A shard-channel subscription across a coordinated failover of its slot's master, on a real Redis
 * Cluster of its own (three masters, a replica each): the old master unsubscribes the slot's
 * channels as it turns replica without closing the connection, and ioredis subscribes again at the
 * new master only once its subscriber reads the new slot map. A file of its own: the other Cluster
 * tests run concurrently, and a failover of theirs would move this test's shard too.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import { Effect } from "effect"
import { type RedisCluster, startCluster } from "../../../../core/testing/cluster.js"
import { inspector, keyOf } from "./utils.js"

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 })
}, 120_000)
afterAll(async () => {
  await cluster?.stop()
})

describe("a shard channel on a Redis Cluster", () => {
  it.live("a subscription follows a failover of its slot's master: a message reaches it within 1.5 s", () =>
    Effect.gen(function*() {
      // no command of the connection touches the slot: the subscriber finds the new master by itself
      const connection = yield* RedisConnection.make({ cluster: cluster.nodes })
      const channel = keyOf("follow")
      const seen: Array<string> = []
      yield* connection.subscribe(channel, (m) => seen.push(m))
      const { from, to } = yield* Effect.promise(() => cluster.failover(channel))
      const served = Date.now()
      // published straight on the new master, every 20 ms, until heard or past the bound
      const publisher = yield* inspector(`redis://127.0.0.1:${to}`)
      let sent = 0
      while (seen.length === 0 && Date.now() - served < 3000) {
        yield* Effect.promise(() => publisher.spublish(channel, String(sent++)))
        yield* Effect.sleep("20 millis")
      }
      const heard = Date.now() - served
      // the bound: the subscriber reads the slot map every 500 ms, then connects to the new master
      assert.isAtMost(heard, 1500, `no message heard within ${heard} ms of the failover from ${from} to ${to}`)
      assert.isAbove(seen.length, 0)
      const channels = yield* Effect.promise(() => publisher.call("PUBSUB", "SHARDCHANNELS"))
      assert.deepStrictEqual(channels, [channel])
    }))
})
