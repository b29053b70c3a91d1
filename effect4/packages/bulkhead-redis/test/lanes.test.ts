/**
 * Lanes on the fleet bulkhead, two instances on connections of their own (two processes, for
 * Redis): the policy's order across them, per-lane bounds and errors naming the lane, `stats.lanes`,
 * `laneOf`, a policy that differs refused naming both (at the start, and by the renewal beat),
 * hand-overs off. A provider's `withLane` reaching the fleet: `provider.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { Cause, Deferred, Duration, Effect, Exit, Fiber } from "effect"
import { inject } from "vitest"
import {
  bulkheadOn,
  capturingLogs,
  eventually,
  expectClean,
  hold,
  inspector,
  stateOf,
  uniqueName
} from "./utils/helpers.js"

const url = inject("redisUrl")

const priority = BulkheadLanes.priority({
  interactive: { maxWaiting: 2 },
  batch: { yieldFor: "1 hour", maxWaiting: 8 }
})

describe("lanes across the fleet", () => {
  it.live("priority: an interactive call queued after batch calls is granted before them, in any process", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-priority")
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes: priority })
      const b = yield* bulkheadOn(url, { name, permits: 1, lanes: priority })
      const redis = yield* inspector(url)
      const log: Array<string> = []
      const gate = yield* hold(a, { lane: "batch" })
      yield* Deferred.await(gate.started)
      const fibers = []
      for (
        const [id, on, lane] of [["b1", a, "batch"], ["b2", b, "batch"], ["i1", b, "interactive"], [
          "i2",
          a,
          "interactive"
        ]] as const
      ) {
        const queued = (yield* stateOf(redis, name)).queue.length
        fibers.push(yield* Effect.forkChild(on.run(Effect.sync(() => log.push(id)), { lane })))
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.queue.length === queued + 1), `${id} queued`)
      }
      // the lanes' counts, fleet-wide, from either instance
      const stats = yield* b.stats
      assert.deepStrictEqual(stats.lanes, [
        { name: "interactive", waiting: 2, waitingPermits: 2, granted: 0 },
        { name: "batch", waiting: 2, waitingPermits: 2, granted: 1 }
      ])
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      assert.deepStrictEqual(log, ["i1", "i2", "b1", "b2"])
      const after = yield* a.stats
      assert.deepStrictEqual(after.lanes?.map((l) => [l.name, l.granted]), [["interactive", 2], ["batch", 3]])
      yield* expectClean(redis, name)
    }))

  it.live("a lane's bound refuses naming the lane; a lane's maxWait runs out naming it; a zero wait is a timeout", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-bounds")
      const lanes = BulkheadLanes.priority({
        interactive: { maxWaiting: 1, maxWait: "100 millis" },
        batch: { yieldFor: "1 minute" }
      })
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes, maxWaiting: 3 })
      const b = yield* bulkheadOn(url, { name, permits: 1, lanes, maxWaiting: 3 })
      const gate = yield* hold(a, { lane: "batch" })
      yield* Deferred.await(gate.started)
      const waited = yield* Effect.forkChild(Effect.flip(b.run(Effect.void, { lane: "interactive" })))
      yield* eventually(Effect.map(a.stats, (s) => s.waiting === 1), "the interactive call queued")
      const full = yield* Effect.flip(a.run(Effect.void, { lane: "interactive" }))
      assert.strictEqual(full._tag, "BulkheadFull")
      assert.strictEqual(
        String(full),
        `BulkheadFull: bulkhead "${name}" lane "interactive" is full: 1 of 1 permits in use and 1 caller queued ` +
          `(maxWaiting 1); refused a call for 1 permit`
      )
      const timedOut = yield* Fiber.join(waited)
      assert.strictEqual(timedOut._tag, "PermitWaitTimeout")
      assert.include(
        String(timedOut),
        `PermitWaitTimeout: bulkhead "${name}" lane "interactive" gave up after waiting 100ms`
      )
      assert.include(String(timedOut), "0 callers were queued ahead of it in its lane when it arrived")
      const now = yield* Effect.flip(a.run(Effect.void, { lane: "interactive", maxWait: 0 }))
      assert.include(String(now), `PermitWaitTimeout: bulkhead "${name}" lane "interactive" gave up after waiting 0ms`)
      // the whole queue's bound, across lanes
      const batchers = yield* Effect.forEach([0, 1, 2], () => Effect.forkChild(b.run(Effect.void, { lane: "batch" })))
      yield* eventually(Effect.map(a.stats, (s) => s.waiting === 3), "three batch calls queued")
      const across = yield* Effect.flip(a.run(Effect.void, { lane: "batch" }))
      assert.include(
        String(across),
        `3 callers queued in all its lanes (maxWaiting 3); refused a call for 1 permit in lane "batch"`
      )
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
      yield* Effect.forEach(batchers, Fiber.join, { discard: true })
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("an undeclared lane is a defect naming the lanes; laneOf answers the lane and its budget", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-laneof")
      const a = yield* bulkheadOn(url, { name, permits: 1, maxWait: "5 seconds", lanes: priority })
      const exit = yield* Effect.exit(a.run(Effect.void, { lane: "bulk" }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      if (Exit.isFailure(exit)) {
        assert.include(
          String(Cause.squash(exit.cause)),
          `bulkhead "${name}": no lane "bulk" (its lanes: interactive, batch)`
        )
      }
      const laneOf = a.bulkhead.laneOf
      assert.isDefined(laneOf)
      assert.deepStrictEqual(laneOf?.(undefined), { name: "batch", maxWait: Duration.seconds(5) })
      assert.isUndefined(laneOf?.("bulk"))
      const plain = yield* bulkheadOn(url, { name: uniqueName("plain"), permits: 1 })
      assert.isUndefined(plain.bulkhead.laneOf)
      // a tenant's name that is not well-formed UTF-16 is a defect naming it
      const fair = yield* bulkheadOn(url, {
        name: uniqueName("lanes-utf16"),
        permits: 1,
        lanes: BulkheadLanes.fairShare({})
      })
      const lone = yield* Effect.exit(fair.run(Effect.void, { lane: "t\uD800" }))
      assert.isTrue(Exit.isFailure(lone) && Cause.hasDies(lone.cause))
      if (Exit.isFailure(lone)) {
        assert.include(String(Cause.squash(lone.cause)), `lane "t\\ud800" is not well-formed UTF-16`)
      }
    }))

  it.live("a process whose policy differs is refused at its start, naming both", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-clash")
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes: priority })
      const gate = yield* hold(a, { lane: "interactive" })
      yield* Deferred.await(gate.started)
      const exit = yield* Effect.exit(
        Effect.scoped(bulkheadOn(url, { name, permits: 1, lanes: BulkheadLanes.fairShare({ weights: { a: 3 } }) }))
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        assert.strictEqual(
          String(Cause.squash(exit.cause)),
          `IllegalArgumentError: bulkhead "${name}": this process's lanes (fairShare: default weight 1, a 3) ` +
            `differ from the lanes the fleet uses under this name (priority: interactive, batch after 1h); every ` +
            `process of a name must give the same lanes (to change them, stop the fleet's calls: an idle name ` +
            `takes the lanes of the next process to start)`
        )
      }
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
    }))

  it.live("a process without lanes and one with lanes on one name: the later is refused, either order", () =>
    Effect.gen(function*() {
      const refusal = (exit: Exit.Exit<unknown>) =>
        Exit.isFailure(exit) && Cause.hasDies(exit.cause) ? String(Cause.squash(exit.cause)) : "not refused"
      const hint = `every process of a name must give the same lanes (to change them, stop the fleet's calls: ` +
        `an idle name takes the lanes of the next process to start)`
      // lanes first: a process without lanes is refused at its start, naming the name's policy
      const first = uniqueName("lanes-mix-a")
      const laned = yield* bulkheadOn(url, { name: first, permits: 2, lanes: priority })
      const gate = yield* hold(laned, { lane: "interactive" })
      yield* Deferred.await(gate.started)
      const plainLate = yield* Effect.exit(Effect.scoped(bulkheadOn(url, { name: first, permits: 2 })))
      assert.strictEqual(
        refusal(plainLate),
        `IllegalArgumentError: bulkhead "${first}": this process's lanes (no lanes) differ from the lanes the ` +
          `fleet uses under this name (priority: interactive, batch after 1h); ${hint}`
      )
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
      // quiet: the name takes a process without lanes
      const plainNow = yield* bulkheadOn(url, { name: first, permits: 2 })
      yield* plainNow.run(Effect.void)
      // no lanes first: a lane process is refused at its start, naming "no lanes"
      const second = uniqueName("lanes-mix-b")
      const plain = yield* bulkheadOn(url, { name: second, permits: 2 })
      const plainGate = yield* hold(plain)
      yield* Deferred.await(plainGate.started)
      const lanedLate = yield* Effect.exit(
        Effect.scoped(bulkheadOn(url, { name: second, permits: 2, lanes: priority }))
      )
      assert.strictEqual(
        refusal(lanedLate),
        `IllegalArgumentError: bulkhead "${second}": this process's lanes (priority: interactive, batch after ` +
          `1h) differ from the lanes the fleet uses under this name (no lanes); ${hint}`
      )
      // nothing was counted for the refused process: the holder's permit is the only one in use
      assert.strictEqual((yield* plain.stats).inFlight, 1)
      yield* Deferred.succeed(plainGate.finish, undefined)
      yield* Fiber.join(plainGate.fiber)
      const lanedNow = yield* bulkheadOn(url, { name: second, permits: 2, lanes: priority })
      yield* lanedNow.run(Effect.void, { lane: "interactive" })
      yield* expectClean(yield* inspector(url), second)
    }))

  it.live("a refusal met by the renewal beat is logged once, and the beat goes on", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-beat")
      const redis = yield* inspector(url)
      const lines: Array<string> = []
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes: priority, leaseTtl: "600 millis" }).pipe(
        Effect.provide(capturingLogs(lines))
      )
      const gate = yield* hold(a, { lane: "interactive" })
      yield* Deferred.await(gate.started)
      const drop = Effect.promise(async () => {
        const keys = await redis.keys(`sluice:bh:{${name}}*`)
        if (keys.length > 0) await redis.del(...keys)
      })
      // Redis lost the name; another policy sets it up: a's renewals are refused
      yield* drop
      yield* bulkheadOn(url, { name, permits: 1, lanes: BulkheadLanes.fairShare({}) })
      const refusal = (line: string) => line.includes("the renewal beat goes on, refused")
      yield* eventually(Effect.sync(() => lines.some(refusal)), "the refusal logged")
      // the beat still runs: with the name gone again, it finds a's lease lost
      yield* drop
      yield* eventually(Effect.sync(() => lines.some((l) => l.includes("was lost"))), "the lost lease logged")
      assert.strictEqual(lines.filter(refusal).length, 1)
      assert.include(lines.find(refusal) ?? "", `ERROR bulkhead "${name}": this process's lanes (priority: `)
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
    }))

  it.live("fair share: tenants served in turn by weight across instances, stats with weights", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-fair")
      const lanes = BulkheadLanes.fairShare({ weights: { big: 2 } })
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes })
      const b = yield* bulkheadOn(url, { name, permits: 1, lanes })
      const redis = yield* inspector(url)
      const log: Array<string> = []
      const gate = yield* hold(a, { lane: "small" })
      yield* Deferred.await(gate.started)
      const fibers = []
      let n = 0
      for (
        const [lane, on] of [["small", a], ["small", b], ["small", a], ["big", b], ["big", a], ["big", b], [
          "big",
          a
        ]] as const
      ) {
        const id = `${lane}${n++}`
        fibers.push(yield* Effect.forkChild(on.run(Effect.sync(() => log.push(lane)), { lane })))
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.queue.length === n), `${id} queued`)
      }
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Fiber.join(gate.fiber)
      yield* Effect.forEach(fibers, Fiber.join, { discard: true })
      // small's turn first (it was in the round first), one permit per turn; big two per turn
      assert.deepStrictEqual(log, ["small", "big", "big", "small", "big", "big", "small"])
      const stats = yield* b.stats
      assert.deepStrictEqual(stats.lanes, [
        { name: "big", waiting: 0, waitingPermits: 0, granted: 4, weight: 2 },
        { name: "small", waiting: 0, waitingPermits: 0, granted: 4, weight: 1 }
      ])
      yield* expectClean(redis, name)
    }))

  it.live("hand-overs are off: a release under lanes is a script, and the fleet's policy picks the next", () =>
    Effect.gen(function*() {
      const name = uniqueName("lanes-release")
      const a = yield* bulkheadOn(url, { name, permits: 1, lanes: priority })
      const b = yield* bulkheadOn(url, { name, permits: 1, lanes: priority })
      const redis = yield* inspector(url)
      const log: Array<string> = []
      // a's own batch waiter is the oldest; b's interactive one arrives later and is served first
      const gate = yield* hold(a, { lane: "batch" })
      yield* Deferred.await(gate.started)
      const mine = yield* Effect.forkChild(a.run(Effect.sync(() => log.push("a batch")), { lane: "batch" }))
      yield* eventually(Effect.map(stateOf(redis, name), (s) => s.queue.length === 1), "a's batch call queued")
      const theirs = yield* Effect.forkChild(
        b.run(Effect.sync(() => log.push("b interactive")), { lane: "interactive" })
      )
      yield* eventually(Effect.map(stateOf(redis, name), (s) => s.queue.length === 2), "b's interactive call queued")
      yield* Deferred.succeed(gate.finish, undefined)
      yield* Effect.all([Fiber.join(gate.fiber), Fiber.join(mine), Fiber.join(theirs)])
      assert.deepStrictEqual(log, ["b interactive", "a batch"])
      yield* expectClean(redis, name)
    }))
})
