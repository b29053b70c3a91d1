/**
 * ioredis clients for the tests: a Cluster client as an application would configure it, and plain
 * clients for inspecting, each closed with the scope; keys in hash tags of their own.
 */
import type { Scope } from "effect"
import { Effect } from "effect"
import { Cluster, Redis } from "ioredis"
import { assert } from "vitest"
import type { ClusterNode } from "../../../../core/testing/cluster.js"

/** A key in its own hash tag, named by `label`: keys of many labels spread over a Cluster's masters. */
export const keyOf = (label: string): string => `t:{${label}-${globalThis.crypto.randomUUID().slice(0, 8)}}:n`

/**
 * A Cluster client set as `RedisConnection`'s docs ask of an application's own (no offline queue
 * on the cluster, no resending, a command timeout), closed with the scope.
 */
export const clusterClient = (nodes: ReadonlyArray<ClusterNode>): Effect.Effect<Cluster, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const client = new Cluster([...nodes], {
        enableOfflineQueue: false,
        redisOptions: { maxRetriesPerRequest: 0, commandTimeout: 1000 }
      })
      client.on("error", () => {})
      return client
    }),
    (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
  )

/** A Cluster client for inspecting, ready (it waits for the slot map; its commands queue until then). */
export const clusterInspector = (nodes: ReadonlyArray<ClusterNode>): Effect.Effect<Cluster, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Cluster([...nodes], { redisOptions: { maxRetriesPerRequest: 1 } })
      client.on("error", () => {})
      if (client.status !== "ready") await new Promise((resolve) => client.once("ready", resolve))
      return client
    }),
    (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
  )

/** A plain ioredis client for inspecting one server, closed with the scope. */
export const inspector = (url: string): Effect.Effect<Redis, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url, { maxRetriesPerRequest: 1 })),
    (redis) => Effect.promise(() => redis.quit().catch(() => redis.disconnect()))
  )

/** Waits (at most 5 s) for a client to end: its connection's scope closed it. */
export const closed = (client: Redis | Cluster): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; client.status !== "end"; i++) {
      if (i > 500) return assert.fail(`the client is ${client.status}, not ended`)
      yield* Effect.sleep("10 millis")
    }
  })
