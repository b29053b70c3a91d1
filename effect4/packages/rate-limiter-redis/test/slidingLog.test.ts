/**
 * A sliding window's log in Redis holds at most `limit + 4096` units, during a script as after it,
 * whatever a settle charges: the debt is whatever the upstream reports, and one script logging it
 * unit by unit held Redis (every other client got BUSY) for seconds per 10^7 units.
 *
 * The log's length during the script is replayed from MONITOR, which shows the commands a script
 * runs, in order.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import { Effect } from "effect"
import { call, inspector, ownServer, store, uniquePrefix } from "./utils.js"

const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
  { algorithm: "sliding-window", limit: 5, windowMillis: 60_000, burst: 5 }
]
const CAPACITY = 5 + 4096

describe("a sliding window's log in Redis", () => {
  it.live("settling 10^9 units writes at most the log's capacity, and the log never holds more", () =>
    Effect.gen(function*() {
      // its own server: MONITOR shows every client's commands
      const server = yield* ownServer()
      const prefix = uniquePrefix("log")
      const s = yield* store({ url: server.url, prefix })
      const redis = yield* inspector(server.url)
      const log = `${prefix}{llm}:v2:log:1`

      // the log's length after each command the scripts run on it, replayed from MONITOR
      const lengths: Array<number> = []
      let length = 0
      const monitor = yield* call(() => redis.monitor())
      yield* Effect.addFinalizer(() => Effect.sync(() => monitor.disconnect()))
      monitor.on("monitor", (_time: string, args: Array<string>) => {
        if (args[1] !== log) return
        const command = args[0].toLowerCase()
        if (command === "rpush") length += args.length - 2
        else if (command === "lpop") length = Math.max(0, length - 1)
        else if (command === "ltrim") length = Math.max(0, length - Number(args[2]))
        else if (command === "del") length = 0
        else return
        lengths.push(length)
      })

      const r = yield* s.reserve({ key: "llm", limits, cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY })
      assert(r._tag === "Reserved")
      const debt = { key: "llm", limits, reservation: r.reservation, restore: r.restore, reserved: [1] }
      yield* s.settle({ ...debt, actual: [1_000_000_000] })
      assert.strictEqual(yield* call(() => redis.llen(log)), CAPACITY)
      // a second debt on a full log: room is made before its units are written
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      const blocked = yield* s.reserve({ key: "llm", limits, cost: 1, maxWaitMillis: 0 })
      assert(blocked._tag === "Refused")
      expect(blocked.delayMillis).toBeGreaterThan(59_000)
      yield* s.settle({ ...debt, actual: [1_000_000_001] })
      assert.strictEqual(yield* call(() => redis.llen(log)), CAPACITY)

      // MONITOR's lines arrive after the replies: wait until the last write was seen
      yield* call(() => redis.ping())
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      expect(lengths.length).toBeGreaterThan(0)
      expect(Math.max(...lengths)).toBeLessThanOrEqual(CAPACITY)
      assert.strictEqual(lengths[lengths.length - 1], CAPACITY)
    }).pipe(Effect.scoped))
})
