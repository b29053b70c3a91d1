/**
 * Redis stopped and restarted (empty, same port) while three processes share K permits, per
 * store-down policy, against the counting server (in flight from a request's first byte to its
 * response's last byte). Every assertion is a count: from the server, from Redis, or from the
 * processes' own tallies; real time only paces the run.
 *
 * Each process holds one long call admitted by Redis before the outage; its short calls loop, paused
 * while Redis stops and while it starts again.
 * - `fail-closed`: while Redis is down no call succeeds, every failure is `BulkheadStoreError` and no
 *   request reaches the server; the server never sees more than K.
 * - `fail-open`, `local`: the calls go on locally, each process within its fleet holder plus its
 *   local permits (K, ⌊K / 3⌋), and each process starts a second long call on the fallback. Once Redis is back, every long call is counted once (`claim`): Redis's `used` is what
 *   the server holds open.
 * Then the calls go on without a restart, with no new failure, and the server never sees more
 * than K once the holders are reconciled.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RedisBulkhead } from "../src/index.js"
import { type Child, worker } from "./utils/child.js"
import { countingServer } from "./utils/countingServer.js"
import { eventually, expectClean, inspector, restartableServer, stateOf, uniqueName } from "./utils/helpers.js"

const K = 6
const PROCESSES = [0, 1, 2]
/** Short calls each process keeps going: more than K, so every bound is reached. */
const CONCURRENCY = 8

interface Tally {
  readonly done: number
  readonly errors: Readonly<Record<string, number>>
}

const failures = (tally: Tally) => Object.values(tally.errors).reduce((a, b) => a + b, 0)

/** The process's own tally: calls done, failures by tag. */
const tallyOf = (child: Child): Effect.Effect<Tally> =>
  Effect.gen(function*() {
    const from = child.received()
    yield* child.send("counts")
    const line = yield* child.lineMatching((l) => l.startsWith("counts "), "its counts", from)
    return JSON.parse(line.slice("counts ".length)) as Tally
  })

const tallies = (children: ReadonlyArray<Child>) => Effect.forEach(children, tallyOf)

/** Sends `command` to every process and waits for each one's `reply(i)` to it. */
const each = (children: ReadonlyArray<Child>, command: (i: number) => string, reply: (i: number) => string) =>
  Effect.forEach(children, (child, i) =>
    Effect.gen(function*() {
      const from = child.received()
      yield* child.send(command(i))
      yield* child.lineMatching((l) => l === reply(i), reply(i), from)
    }), { discard: true })

const policies: ReadonlyArray<{ readonly storeDown: RedisBulkhead.StoreDownPolicy; readonly localShare?: number }> = [
  { storeDown: "fail-closed" },
  { storeDown: "fail-open" },
  { storeDown: "local", localShare: 1 / 3 }
]

// one at a time: each starts node processes
describe("Redis restarted under three processes", { concurrent: false }, () => {
  for (const policy of policies) {
    const fallback = policy.storeDown !== "fail-closed"
    it.live(
      fallback
        ? `${policy.storeDown}: the calls go on locally; once Redis is back every holder counts once, ` +
          `Redis's used is what the server holds open, and the server never sees more than K again`
        : `${policy.storeDown}: every call fails with BulkheadStoreError while Redis is down, the server never ` +
          `sees more than K, and the calls go on without a restart once it is back`,
      () =>
        Effect.gen(function*() {
          const redisServer = yield* restartableServer
          const server = yield* countingServer
          const name = uniqueName(`restart-${policy.storeDown}`)
          const children = yield* Effect.forEach(PROCESSES, (i) =>
            worker({
              url: redisServer.url,
              name,
              permits: K,
              leaseTtlMillis: 900,
              mode: "fleet",
              port: server.port,
              concurrency: CONCURRENCY,
              label: `p${i}`,
              ...policy
            }))
          yield* Effect.forEach(children, (c) => c.lineMatching((l) => l === "ready", "ready"), { discard: true })
          const redis = yield* inspector(redisServer.url)

          // before: one long holder per process (3 of K in Redis), short calls looping for the rest
          yield* each(children, (i) => `hold a${i}`, (i) => `holding a${i}`)
          yield* eventually(Effect.map(stateOf(redis, name), (s) => s.used === 3), "the long holders counted")
          yield* Effect.forEach(children, (c) => c.send("go"), { discard: true })
          yield* eventually(
            Effect.map(tallies(children), (ts) => ts.every((t) => t.done >= 5)),
            "every process's calls running"
          )

          // down, with no call of the loops in flight: a ticket queued in Redis would wait through the outage
          // and queue again when Redis is back, racing the claims
          yield* each(children, () => "pause", () => "paused")
          yield* redisServer.stop
          const peakBefore = server.counts.peak
          const totalBefore = server.counts.total
          server.resetPeak()
          yield* Effect.forEach(children, (c) => c.send("resume"), { discard: true })
          if (fallback) {
            const down = yield* tallies(children)
            yield* eventually(
              Effect.map(tallies(children), (ts) => ts.every((t, i) => t.done >= down[i].done + 10)),
              "the calls go on while Redis is down"
            )
            yield* each(children, (i) => `hold b${i}`, (i) => `holding b${i}`)
          } else {
            yield* eventually(
              Effect.map(tallies(children), (ts) => ts.every((t) => (t.errors.BulkheadStoreError ?? 0) >= 3)),
              "every process failing with BulkheadStoreError"
            )
            const failing = yield* tallies(children)
            yield* Effect.sleep("300 millis")
            const later = yield* tallies(children)
            later.forEach((t, i) => {
              assert.strictEqual(t.done, failing[i].done, `process ${i}: a call succeeded while Redis was down`)
              assert.isAbove(t.errors.BulkheadStoreError ?? 0, failing[i].errors.BulkheadStoreError ?? 0)
              assert.deepStrictEqual(Object.keys(t.errors), ["BulkheadStoreError"])
            })
          }
          const holders = fallback ? 6 : 3
          yield* eventually(Effect.sync(() => server.holding().length === holders), `${holders} requests held open`)
          // while down, each process runs its fleet holder and at most its local permits (none when failing closed)
          const localPermits = policy.storeDown === "fail-open" ? K : policy.storeDown === "local" ? 2 : 0
          PROCESSES.forEach((i) => {
            const peak = server.groups.get(`p${i}`)?.peak ?? 0
            assert.isAtMost(peak, 1 + localPermits, `process ${i} while Redis was down`)
            assert.isAtLeast(peak, fallback ? 2 : 1, `process ${i} while Redis was down`)
          })
          if (!fallback) assert.strictEqual(server.counts.total, totalBefore, "no request while Redis was down")

          // back, empty, the short calls paused (none queued: they fail or run locally while Redis is down):
          // the long holders are claimed, each once
          yield* each(children, () => "pause", () => "paused")
          const from = children.map((c) => c.received())
          yield* redisServer.start
          yield* Effect.forEach(
            children,
            (c, i) => c.lineMatching((l) => l.includes("Redis answers again"), "Redis back", from[i]),
            { discard: true }
          )
          yield* eventually(
            Effect.map(stateOf(redis, name), (s) => s.used >= holders),
            `the ${holders} long holders claimed`
          )
          const reconciled = yield* stateOf(redis, name)
          assert.strictEqual(server.counts.active, holders)
          assert.deepStrictEqual(
            { used: reconciled.used, held: reconciled.held.length, queue: reconciled.queue.length },
            { used: server.counts.active, held: holders, queue: 0 },
            "Redis counts each holder the server sees, once"
          )
          if (!fallback) assert.isAtMost(Math.max(peakBefore, server.counts.peak), K, "before Redis came back")

          // the fallback holders end; the short calls go on, sharing K with the fleet's holders
          if (fallback) {
            PROCESSES.forEach((i) => server.release(`b${i}`))
            yield* Effect.forEach(children, (c, i) => c.lineMatching((l) => l === `done b${i}`, `done b${i}`), {
              discard: true
            })
          }
          yield* eventually(Effect.map(stateOf(redis, name), (s) => s.used === 3), "the fallback holders released")
          server.resetPeak()
          const resumed = yield* tallies(children)
          yield* Effect.forEach(children, (c) => c.send("resume"), { discard: true })
          yield* eventually(
            Effect.map(tallies(children), (ts) => ts.every((t, i) => t.done >= resumed[i].done + 10)),
            "the calls go on after Redis is back"
          )
          PROCESSES.forEach((i) => server.release(`a${i}`))
          yield* Effect.forEach(children, (c, i) => c.lineMatching((l) => l === `done a${i}`, `done a${i}`), {
            discard: true
          })
          const final = yield* Effect.forEach(children, (c) =>
            Effect.gen(function*() {
              const from = c.received()
              yield* c.send("stop")
              const line = yield* c.lineMatching((l) => l.startsWith("counts "), "its last counts", from)
              return JSON.parse(line.slice("counts ".length)) as Tally
            }))
          final.forEach((t, i) =>
            assert.strictEqual(failures(t), failures(resumed[i]), `process ${i}: a call failed after Redis came back`)
          )
          assert.isAtMost(server.counts.peak, K, "after the holders were reconciled")
          assert.isAtLeast(server.counts.peak, 4)
          yield* eventually(
            Effect.map(stateOf(redis, name), (s) => s.used === 0 && s.held.length === 0),
            "every permit back"
          )
          yield* expectClean(redis, name)
        }),
      { timeout: 120_000 }
    )
  }
})
