/**
 * The tests' tools: bulkheads on connections of their own (a separate process, as far as Redis
 * can tell), what Redis holds for a bulkhead, held calls, captured logs, servers of a test's own.
 */
import type { Bulkhead } from "@sluice/bulkhead"
import { RedisConnection } from "@sluice/redis"
import type { Fiber, Scope } from "effect"
import { Deferred, Effect, Layer, Logger, Metric } from "effect"
import { Cluster, Redis } from "ioredis"
import type { ClusterNode } from "../../../../../core/testing/cluster.js"
import { type RedisServer, startRedisServer } from "../../../../../core/testing/redisServer.js"
import { RedisBulkhead } from "../../src/index.js"

let counter = 0
/** A bulkhead name no other test uses: the tests of a file run concurrently on one Redis. */
export const uniqueName = (label: string): string =>
  `t-${label}-${++counter}-${globalThis.crypto.randomUUID().slice(0, 8)}`

/** A connection of its own: a separate process, as far as Redis can tell. */
export const connectionLayer = (url: string): Layer.Layer<RedisConnection.RedisConnection, unknown> =>
  RedisConnection.layer({ url })

/** A bulkhead on a connection of its own (from a URL: a new connection), in the current scope. */
export const bulkheadOn = (
  connection: string | Layer.Layer<RedisConnection.RedisConnection, unknown>,
  options: RedisBulkhead.Options
): Effect.Effect<RedisBulkhead.RedisBulkhead, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.orDie(Layer.build(typeof connection === "string" ? connectionLayer(connection) : connection)),
    (context) => Effect.provide(RedisBulkhead.make(options), context)
  )

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

/** A plain ioredis client for inspecting Redis, closed with the scope. */
export const inspector = (url: string): Effect.Effect<Redis, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const redis = new Redis(url, { maxRetriesPerRequest: 1 })
      // a test that stops Redis sees its reconnection attempts fail: not an error of the test
      redis.on("error", () => {})
      return redis
    }),
    (redis) => Effect.promise(() => redis.quit().catch(() => redis.disconnect()))
  )

/** What Redis holds for one bulkhead. */
export interface State {
  readonly queue: ReadonlyArray<string>
  readonly held: ReadonlyArray<string>
  readonly waitingLeases: ReadonlyArray<string>
  readonly used: number
  readonly wanted: number
  readonly permits: number
}

export const stateOf = (redis: Redis | Cluster, name: string, prefix = "sluice:bh:"): Effect.Effect<State> =>
  Effect.promise(async () => {
    const { keys } = RedisBulkhead.keysOf(prefix, name)
    const [, meta, queue, wlease, held] = keys
    const [q, w, h, m] = await Promise.all([
      redis.zrange(queue, 0, -1),
      redis.zrange(wlease, 0, -1),
      redis.zrange(held, 0, -1),
      redis.hgetall(meta)
    ])
    return {
      queue: q,
      held: h,
      waitingLeases: w,
      used: Number(m.used ?? 0),
      wanted: Number(m.wanted ?? 0),
      permits: Number(m.permits ?? 0)
    }
  })

/** No ticket, no lease, counters at zero: nothing leaked. */
export const expectClean = (redis: Redis | Cluster, name: string) =>
  Effect.flatMap(stateOf(redis, name), (state) =>
    Effect.sync(() => {
      if (
        state.queue.length !== 0 || state.held.length !== 0 || state.waitingLeases.length !== 0 ||
        state.used !== 0 || state.wanted !== 0
      ) {
        throw new Error(`bulkhead "${name}" left state behind: ${JSON.stringify(state)}`)
      }
    }))

/** Polls `condition` every 20 ms until it holds (a loaded machine decides how long; the test timeout bounds it). */
export const eventually = <E, R>(condition: Effect.Effect<boolean, E, R>, what: string): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    for (let i = 0; i < 1500; i++) {
      if (yield* condition) return
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for: ${what}`))
  })

/** A call that holds its permits until `finish` completes, and says when it started. */
export interface Held {
  readonly started: Deferred.Deferred<void>
  readonly finish: Deferred.Deferred<void, string>
  readonly fiber: Fiber.Fiber<void, unknown>
}

export const hold = (
  bulkhead: { readonly run: RedisBulkhead.RedisBulkhead["run"] },
  options?: Bulkhead.RunOptions,
  log?: Array<string>,
  id?: string
): Effect.Effect<Held> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const finish = yield* Deferred.make<void, string>()
    const fiber = yield* Effect.forkChild(
      bulkhead.run(
        Effect.andThen(
          Effect.suspend(() => {
            if (id !== undefined) log?.push(id)
            return Deferred.succeed(started, undefined)
          }),
          Deferred.await(finish)
        ),
        options
      ),
      { startImmediately: true }
    )
    return { started, finish, fiber }
  })

/** A logger that records every line into `lines` (`WARN <message>`), in place of the default one. */
export const capturingLogs = (lines: Array<string>) =>
  Logger.layer([
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.toUpperCase()} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  ])

/** A redis-server of the test's own (for tests that drop connections or restart it), stopped with the scope. */
export const ownServer = (port?: number): Effect.Effect<RedisServer, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startRedisServer(port)), (server) => Effect.promise(() => server.stop()))

/** How many times Redis ran each command since its stats were last reset (INFO commandstats). */
export const commandCalls = <const C extends string>(
  redis: Redis,
  ...commands: ReadonlyArray<C>
): Effect.Effect<Record<C, number>> =>
  Effect.promise(async () => {
    const info = await redis.info("commandstats")
    const calls = {} as Record<C, number>
    for (const command of commands) {
      calls[command] = Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0)
    }
    return calls
  })

/** Whether `n` tickets wait, fleet-wide. */
export const waitingIs = (bulkhead: RedisBulkhead.RedisBulkhead, n: number): Effect.Effect<boolean, unknown> =>
  Effect.map(bulkhead.stats, (stats) => stats.waiting === n)

/** Counts the permits held from inside the calls: `call(cost)` holds them for `millis`; `peak` is the most at once. */
export const probe = () => {
  const counts = { running: 0, peak: 0 }
  const call = (cost = 1, millis = 5): Effect.Effect<void> =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        counts.running += cost
        counts.peak = Math.max(counts.peak, counts.running)
      }),
      () => Effect.sleep(`${millis} millis`),
      () => Effect.sync(() => (counts.running -= cost))
    )
  return { counts, call }
}

/** A redis-server of the test's own that it stops and starts again (empty) on the same port; stopped with the scope. */
export const restartableServer = Effect.gen(function*() {
  let server = yield* Effect.promise(() => startRedisServer())
  const port = server.port
  yield* Effect.addFinalizer(() => Effect.promise(() => server.stop()))
  return {
    url: server.url,
    stop: Effect.promise(() => server.stop()),
    start: Effect.promise(async () => {
      server = await startRedisServer(port)
    })
  } as const
})

/** The bulkhead's store-degraded gauge: 1 while Redis cannot answer it, else 0. */
export const degradedValue = (name: string) =>
  Effect.map(Metric.value(Metric.withAttributes(RedisBulkhead.storeDegraded, { name })), (s) => s.value)

/** The bulkhead's lease-lost counter: holders that learnt their lease was gone. */
export const lostCount = (name: string) =>
  Effect.map(Metric.value(Metric.withAttributes(RedisBulkhead.leaseLostTotal, { name })), (s) => s.count)
