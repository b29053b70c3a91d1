import { assert, describe, expect, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import type { Tracer } from "effect"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Metric, Result, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, hold, metricOf, uniqueName, yieldTurns } from "./utils.js"

describe("Bulkhead", () => {
  describe("order", () => {
    it.effect("hands released permits to waiters in arrival order", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("fifo"), permits: 2 })
        const log: Array<string> = []
        const calls = []
        for (const id of ["a", "b", "c", "d", "e", "f"]) calls.push(yield* hold(bulkhead, id, undefined, log))
        assert.deepStrictEqual(log, ["a", "b"])
        assert.deepStrictEqual(yield* bulkhead.stats, {
          name: bulkhead.name,
          permits: 2,
          maxPermits: 2,
          inFlight: 2,
          holders: 2,
          waiting: 4,
          waitingPermits: 4,
          maxWaiting: Infinity
        })
        // finish the holders out of order: the permits still go to the oldest waiters
        yield* Deferred.succeed(calls[1].finish, undefined)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "b", "c"])
        yield* Deferred.succeed(calls[0].finish, undefined)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "b", "c", "d"])
        for (const call of calls) yield* Deferred.succeed(call.finish, undefined)
        for (const call of calls) yield* Fiber.join(call.fiber)
        assert.deepStrictEqual(log, ["a", "b", "c", "d", "e", "f"])
        yield* expectIdle(bulkhead)
      }))

    it.effect("a heavy waiter at the head is not overtaken by lighter ones behind it", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("weights"), permits: 4 })
        const log: Array<string> = []
        const a = yield* hold(bulkhead, "a", { permits: 3 }, log)
        const b = yield* hold(bulkhead, "b", { permits: 2 }, log) // needs 2, only 1 is free
        const c = yield* hold(bulkhead, "c", { permits: 1 }, log) // would fit, but b is ahead
        assert.deepStrictEqual(log, ["a"])
        assert.include(yield* bulkhead.stats, { inFlight: 3, waiting: 2, waitingPermits: 3 })
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        // b (2) and then c (1) fit into the 4 permits, in that order
        assert.deepStrictEqual(log, ["a", "b", "c"])
        assert.include(yield* bulkhead.stats, { inFlight: 3, holders: 2, waiting: 0 })
        yield* Deferred.succeed(b.finish, undefined)
        yield* Deferred.succeed(c.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("a newcomer never barges past the queue, even in the turn a permit is released", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("barge"), permits: 1 })
        const scope = yield* Scope.make()
        yield* bulkhead.acquire().pipe(Scope.provide(scope))
        const waiter = yield* hold(bulkhead, "waiter")
        // release and arrive in the same synchronous step: the permit already belongs to the waiter
        yield* Scope.close(scope, Exit.void)
        const newcomer = yield* bulkhead.run(Effect.void, { maxWait: 0 }).pipe(Effect.flip)
        assert.strictEqual(newcomer._tag, "PermitWaitTimeout")
        yield* yieldTurns()
        assert.isTrue(yield* waiter.hasStarted)
        yield* Deferred.succeed(waiter.finish, undefined)
        yield* Fiber.join(waiter.fiber)
        yield* expectIdle(bulkhead)
      }))

    it.effect("order lifo serves the newest waiter first", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("lifo"), permits: 1, order: "lifo" })
        const log: Array<string> = []
        const calls = []
        for (const id of ["a", "b", "c", "d"]) calls.push(yield* hold(bulkhead, id, undefined, log))
        for (const call of calls) {
          yield* Deferred.succeed(call.finish, undefined)
          yield* yieldTurns()
        }
        assert.deepStrictEqual(log, ["a", "d", "c", "b"])
        yield* expectIdle(bulkhead)
      }))
  })

  describe("bounds", () => {
    it.effect("a caller arriving at a full queue fails at once with BulkheadFull, holding nothing", () =>
      Effect.gen(function*() {
        const name = uniqueName("full")
        const bulkhead = yield* Bulkhead.make({ name, permits: 2, maxWaiting: 1 })
        const a = yield* hold(bulkhead, "a")
        const b = yield* hold(bulkhead, "b")
        const c = yield* hold(bulkhead, "c")
        const error = yield* bulkhead.run(Effect.void).pipe(Effect.flip)
        assert.instanceOf(error, Bulkhead.BulkheadFull)
        assert.isTrue(Bulkhead.isBulkheadError(error))
        assert.include(error, { bulkhead: name, permits: 2, inFlight: 2, waiting: 1, maxWaiting: 1, requested: 1 })
        assert.strictEqual(
          error.message,
          `bulkhead "${name}" is full: 2 of 2 permits in use and 1 caller queued (maxWaiting 1); ` +
            `refused a call for 1 permit`
        )
        assert.include(yield* bulkhead.stats, { inFlight: 2, waiting: 1 })
        assert.strictEqual(
          yield* metricOf(Bulkhead.rejectedTotal, name, { reason: "full" }).pipe(Effect.map((c) => c.count)),
          1
        )
        for (const call of [a, b, c]) yield* Deferred.succeed(call.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("maxWaiting 0 never queues", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("noqueue"), permits: 1, maxWaiting: 0 })
        const a = yield* hold(bulkhead, "a")
        const error = yield* bulkhead.run(Effect.void).pipe(Effect.flip)
        assert.strictEqual(error._tag, "BulkheadFull")
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("maxWait expiry fails with PermitWaitTimeout, leaves the queue and holds nothing", () =>
      Effect.gen(function*() {
        const name = uniqueName("maxwait")
        const bulkhead = yield* Bulkhead.make({ name, permits: 1, maxWait: "2 seconds" })
        const a = yield* hold(bulkhead, "a")
        const b = yield* hold(bulkhead, "b") // queued first: 0 ahead of it
        const c = yield* hold(bulkhead, "c") // 1 ahead of it
        yield* TestClock.adjust("1999 millis")
        assert.include(yield* bulkhead.stats, { waiting: 2 })
        assert.isUndefined(c.fiber.pollUnsafe())
        yield* TestClock.adjust("1 millis")
        const errorB = yield* Fiber.join(b.fiber).pipe(Effect.flip)
        const errorC = yield* Fiber.join(c.fiber).pipe(Effect.flip)
        assert.instanceOf(errorB, Bulkhead.PermitWaitTimeout)
        assert.instanceOf(errorC, Bulkhead.PermitWaitTimeout)
        if (errorC._tag !== "PermitWaitTimeout") return assert.fail("expected a timeout")
        assert.include(errorC, { bulkhead: name, requested: 1, permits: 1, inFlight: 1, aheadWhenQueued: 1 })
        assert.isTrue(Duration.equals(errorC.waited, Duration.seconds(2)))
        assert.strictEqual(
          errorC.message,
          `bulkhead "${name}" gave up after waiting 2s for 1 of 1 permits (1 in use); ` +
            `1 caller was queued ahead of it when it arrived`
        )
        assert.include(yield* bulkhead.stats, { inFlight: 1, waiting: 0, waitingPermits: 0 })
        const rejected = yield* metricOf(Bulkhead.rejectedTotal, name, { reason: "timeout" })
        assert.strictEqual(rejected.count, 2)
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("a per-call maxWait overrides the bulkhead's, and 0 means do not wait", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("override"), permits: 1, maxWait: "1 minute" })
        const a = yield* hold(bulkhead, "a")
        const immediate = yield* bulkhead.run(Effect.void, { maxWait: 0 }).pipe(Effect.flip)
        assert.strictEqual(immediate._tag, "PermitWaitTimeout")
        const short = yield* bulkhead.run(Effect.void, { maxWait: "100 millis" }).pipe(Effect.flip, Effect.forkChild)
        yield* TestClock.adjust("100 millis")
        assert.strictEqual((yield* Fiber.join(short))._tag, "PermitWaitTimeout")
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("a waiter granted its permit before maxWait runs out is not timed out", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("intime"), permits: 1, maxWait: "2 seconds" })
        const a = yield* hold(bulkhead, "a")
        const b = yield* hold(bulkhead, "b")
        yield* TestClock.adjust("1500 millis")
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        assert.isTrue(yield* b.hasStarted)
        yield* TestClock.adjust("10 seconds")
        yield* Deferred.succeed(b.finish, undefined)
        yield* Fiber.join(b.fiber)
        yield* expectIdle(bulkhead)
      }))
  })

  describe("the deprecated `cost`", () => {
    it.effect("is read when `permits` is not given, and errors still answer it", () =>
      Effect.gen(function*() {
        const name = uniqueName("cost-alias")
        const bulkhead = yield* Bulkhead.make({ name, permits: 3, maxWaiting: 0 })
        const a = yield* hold(bulkhead, "a", { cost: 2 })
        assert.deepInclude(yield* bulkhead.stats, { inFlight: 2 })
        const error = yield* bulkhead.run(Effect.void, { cost: 2 }).pipe(Effect.flip)
        assert.strictEqual(error._tag, "BulkheadFull")
        assert.strictEqual(error.requested, 2)
        assert.strictEqual(error.cost, 2)
        // `permits` wins when both are given
        yield* bulkhead.run(Effect.void, { permits: 1, cost: 3 })
        yield* Deferred.succeed(a.finish, undefined)
        yield* Fiber.join(a.fiber)
        yield* expectIdle(bulkhead)
      }))
  })

  describe("release", () => {
    it.effect("a holder that fails, dies or is interrupted returns its permits exactly once", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("release"), permits: 3 })
        const failed = yield* bulkhead.run(Effect.fail("boom" as const), { permits: 2 }).pipe(Effect.flip)
        assert.strictEqual(failed, "boom")
        const died = yield* bulkhead.run(Effect.die(new Error("kaput")), { permits: 3 }).pipe(Effect.exit)
        assert.isTrue(Exit.isFailure(died) && Cause.hasDies(died.cause))
        const a = yield* hold(bulkhead, "a", { permits: 2 })
        yield* Fiber.interrupt(a.fiber)
        const b = yield* hold(bulkhead, "b", { permits: 1 })
        yield* Deferred.fail(b.finish, "failed mid-call")
        assert.strictEqual(yield* Fiber.join(b.fiber).pipe(Effect.flip), "failed mid-call")
        yield* expectIdle(bulkhead)
      }))

    it.effect("a queued waiter that is interrupted leaves the queue, and the waiters behind it move up", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("leave"), permits: 2 })
        const log: Array<string> = []
        const a = yield* hold(bulkhead, "a", { permits: 1 }, log)
        const heavy = yield* hold(bulkhead, "heavy", { permits: 2 }, log)
        const light = yield* hold(bulkhead, "light", { permits: 1 }, log)
        assert.include(yield* bulkhead.stats, { waiting: 2, waitingPermits: 3 })
        // the heavy head leaves: the light waiter behind it now fits in the free permit
        yield* Fiber.interrupt(heavy.fiber)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "light"])
        assert.isFalse(yield* heavy.hasStarted)
        for (const call of [a, light]) yield* Deferred.succeed(call.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("acquire holds the permits until the scope closes", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("scoped"), permits: 2 })
        const scope = yield* Scope.make()
        yield* bulkhead.acquire({ permits: 2 }).pipe(Scope.provide(scope))
        assert.include(yield* bulkhead.stats, { inFlight: 2, holders: 1 })
        yield* Scope.close(scope, Exit.void)
        yield* expectIdle(bulkhead)
      }))
  })

  describe("resize", () => {
    it.effect("growing admits waiters at once; shrinking pre-empts nobody", () =>
      Effect.gen(function*() {
        const name = uniqueName("resize")
        const bulkhead = yield* Bulkhead.make({ name, permits: 2, maxPermits: 4 })
        const log: Array<string> = []
        const calls = []
        for (const id of ["a", "b", "c", "d", "e"]) calls.push(yield* hold(bulkhead, id, undefined, log))
        assert.deepStrictEqual(log, ["a", "b"])
        yield* bulkhead.resize(4)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "b", "c", "d"])
        assert.strictEqual(yield* metricOf(Bulkhead.permits, name).pipe(Effect.map((g) => g.value)), 4)
        // shrink to 1 with 4 in flight: nobody is interrupted, and e waits until fewer than 1 is held
        yield* bulkhead.resize(1)
        assert.include(yield* bulkhead.stats, { permits: 1, inFlight: 4, waiting: 1 })
        for (const call of calls.slice(0, 3)) yield* Deferred.succeed(call.finish, undefined)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "b", "c", "d"])
        assert.include(yield* bulkhead.stats, { inFlight: 1, waiting: 1 })
        yield* Deferred.succeed(calls[3].finish, undefined)
        yield* yieldTurns()
        assert.deepStrictEqual(log, ["a", "b", "c", "d", "e"])
        yield* Deferred.succeed(calls[4].finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("a call may need up to maxPermits and waits for a resize that lets it in", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("bigcost"), permits: 1, maxPermits: 3 })
        const big = yield* hold(bulkhead, "big", { permits: 3 })
        assert.isFalse(yield* big.hasStarted)
        yield* bulkhead.resize(3)
        yield* yieldTurns()
        assert.isTrue(yield* big.hasStarted)
        yield* Deferred.succeed(big.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))
  })

  describe("bad input is a clear error, never a hang", () => {
    const dies = (effect: Effect.Effect<unknown, unknown>, message: RegExp) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(effect)
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), "expected a defect")
        if (Exit.isFailure(exit)) {
          const defect = Result.getOrThrow(Cause.findDefect(exit.cause))
          assert.isTrue(Cause.isIllegalArgumentError(defect))
          expect(String((defect as Error).message)).toMatch(message)
        }
      })

    it.effect("invalid options", () =>
      Effect.gen(function*() {
        yield* dies(Bulkhead.make({ name: "x", permits: 0 }), /bulkhead "x": permits must be an integer ≥ 1, got 0/)
        yield* dies(Bulkhead.make({ name: "x", permits: -2 }), /got -2/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1.5 }), /got 1.5/)
        yield* dies(Bulkhead.make({ name: "x", permits: NaN }), /got NaN/)
        yield* dies(Bulkhead.make({ name: "", permits: 1 }), /non-empty name/)
        yield* dies(
          Bulkhead.make({ name: "x", permits: 4, maxPermits: 2 }),
          /maxPermits must be an integer ≥ permits \(4\)/
        )
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWaiting: -1 }), /maxWaiting/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: -5 }), /maxWait must be a duration ≥ 0, got -5/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: NaN }), /maxWait must be a duration ≥ 0, got NaN/)
      }))

    it.effect("counts past 2^53 - 1 are refused, and NaN and Infinity are printed as such", () =>
      Effect.gen(function*() {
        const huge = 2 ** 60
        yield* dies(
          Bulkhead.make({ name: "x", permits: huge }),
          /bulkhead "x": permits must be an integer ≥ 1, got 1152921504606847000 \(not a safe integer/
        )
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxPermits: huge }), /maxPermits .*not a safe integer/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWaiting: huge }), /maxWaiting .*not a safe integer/)
        yield* dies(Bulkhead.make({ name: "x", permits: Infinity }), /permits must be an integer ≥ 1, got Infinity/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWaiting: NaN }), /maxWaiting .*, got NaN$/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, order: NaN as never }), /order .*, got NaN$/)
        yield* dies(Bulkhead.make({ name: NaN as never, permits: 1 }), /non-empty name, got NaN$/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: -Infinity }), /maxWait .*, got -Infinity$/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: [0, NaN] }), /maxWait .*, got \[0, NaN\]$/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: [0, -1] }), /maxWait .*, got \[0, -1\]$/)
        yield* dies(Bulkhead.make({ name: "x", permits: 1, maxWait: "-5 seconds" }), /got "-5 seconds"$/)
        const bulkhead = yield* Bulkhead.make({ name: "y", permits: 1, maxWait: Infinity })
        assert.isFalse(Duration.isFinite(bulkhead.maxWait))
        yield* dies(bulkhead.run(Effect.void, { permits: huge }), /permits must be .*, got 1152921504606847000$/)
        yield* dies(bulkhead.resize(Infinity), /resize needs .*, got Infinity$/)
        yield* dies(
          Bulkhead.forEach([1], bulkhead, () => Effect.void, { workers: huge }),
          /workers .*not a safe integer/
        )
        yield* dies(
          Stream.runDrain(Bulkhead.mapStream(Stream.make(1), bulkhead, () => Effect.void, { buffer: NaN })),
          /buffer must be an integer ≥ 1, got NaN$/
        )
        yield* expectIdle(bulkhead)
      }))

    it.effect("invalid permits and resize", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: "y", permits: 2, maxPermits: 3 })
        yield* dies(
          bulkhead.run(Effect.void, { permits: 4 }),
          /permits must be an integer from 1 to maxPermits \(3\), got 4/
        )
        yield* dies(bulkhead.run(Effect.void, { permits: 0 }), /got 0/)
        yield* dies(bulkhead.run(Effect.void, { permits: NaN }), /got NaN/)
        yield* dies(bulkhead.run(Effect.void, { maxWait: -1 }), /maxWait must be a duration ≥ 0/)
        yield* dies(bulkhead.resize(0), /resize needs an integer from 1 to maxPermits \(3\), got 0/)
        yield* dies(bulkhead.resize(4), /got 4/)
        yield* expectIdle(bulkhead)
      }))
  })

  describe("vocabulary", () => {
    it.effect("a bulkhead exposes its maxWait, so an instance carries its budget", () =>
      Effect.gen(function*() {
        const bounded = yield* Bulkhead.make({ name: uniqueName("max-wait"), permits: 1, maxWait: "2 seconds" })
        assert.isTrue(Duration.equals(bounded.maxWait, Duration.seconds(2)))
        const zero = yield* Bulkhead.make({ name: uniqueName("max-wait"), permits: 1, maxWait: 0 })
        assert.isTrue(Duration.isZero(zero.maxWait))
        const unbounded = yield* Bulkhead.make({ name: uniqueName("max-wait"), permits: 1 })
        assert.isTrue(Duration.equals(unbounded.maxWait, Duration.infinity))
        // the settings a tag's layer takes are Bulkhead.Settings, the options without the name
        class Photon extends Bulkhead.Tag("photon")<Photon>() {}
        const settings: Bulkhead.Settings = { permits: 2, maxWait: "300 millis" }
        const fromTag = yield* Effect.provide(Photon, Photon.layer(settings))
        assert.isTrue(Duration.equals(fromTag.maxWait, Duration.millis(300)))
      }))

    it.effect("every error names its bulkhead in the field `bulkhead`", () =>
      Effect.gen(function*() {
        const name = uniqueName("named")
        const bulkhead = yield* Bulkhead.make({ name, permits: 1, maxWaiting: 1, maxWait: "1 second" })
        const a = yield* hold(bulkhead, "a")
        const waiter = yield* Effect.forkChild(bulkhead.run(Effect.void))
        yield* yieldTurns()
        const full = yield* bulkhead.run(Effect.void).pipe(Effect.flip)
        yield* TestClock.adjust("1 second")
        const timeout = yield* Fiber.join(waiter).pipe(Effect.flip)
        const errors: ReadonlyArray<Bulkhead.BulkheadError> = [full, timeout]
        assert.deepStrictEqual(errors.map((e) => [e._tag, e.bulkhead]), [["BulkheadFull", name], [
          "PermitWaitTimeout",
          name
        ]])
        for (const e of errors) assert.include(e.message, `bulkhead "${name}"`)
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        yield* expectIdle(bulkhead)
      }))

    it.effect("the errors are Schema classes: a refusal encodes and decodes back to an equal one", () =>
      Effect.gen(function*() {
        const name = uniqueName("schema")
        const bulkhead = yield* Bulkhead.make({ name, permits: 1, maxWaiting: 0, maxWait: "1 second" })
        const a = yield* hold(bulkhead, "a")
        const full = yield* bulkhead.run(Effect.void).pipe(Effect.flip)
        if (full._tag !== "BulkheadFull") return assert.fail("expected BulkheadFull")
        const decoded = Schema.decodeSync(Bulkhead.BulkheadFull)(Schema.encodeSync(Bulkhead.BulkheadFull)(full))
        assert.instanceOf(decoded, Bulkhead.BulkheadFull)
        assert.strictEqual(decoded.message, full.message)
        assert.isTrue(Bulkhead.isBulkheadError(decoded))
        const timeout = new Bulkhead.PermitWaitTimeout({
          bulkhead: name,
          waited: Duration.seconds(2),
          requested: 1,
          cost: 1,
          permits: 1,
          inFlight: 1,
          aheadWhenQueued: 0
        })
        const back = Schema.decodeSync(Bulkhead.PermitWaitTimeout)(
          Schema.encodeSync(Bulkhead.PermitWaitTimeout)(timeout)
        )
        assert.strictEqual(back.message, timeout.message)
        assert.isTrue(String(back).startsWith("PermitWaitTimeout"))
        yield* Deferred.succeed(a.finish, undefined)
        yield* Fiber.join(a.fiber)
      }))

    it.effect("metric exports are named after the metric: rejectedTotal, with rejected kept as its deprecated alias", () =>
      Effect.gen(function*() {
        assert.strictEqual(Bulkhead.rejectedTotal, Bulkhead.rejected)
        // records under a label of its own, then reads the exported name back from the registry
        const exportedName = <State>(metric: Metric.Metric<number, State>) =>
          Effect.gen(function*() {
            const name = uniqueName("export")
            yield* Metric.update(Metric.withAttributes(metric, { name }), 0)
            const series = (yield* Metric.snapshot).filter((snapshot) => snapshot.attributes?.name === name)
            assert.strictEqual(series.length, 1)
            return series[0]!.id
          })
        const exports = {
          permitWaitSeconds: yield* exportedName(Bulkhead.permitWaitSeconds),
          inFlight: yield* exportedName(Bulkhead.inFlight),
          waiting: yield* exportedName(Bulkhead.waiting),
          permits: yield* exportedName(Bulkhead.permits),
          rejectedTotal: yield* exportedName(Bulkhead.rejectedTotal)
        }
        for (const [exported, metricName] of Object.entries(exports)) {
          const camel = metricName.replace(/^sluice_(bulkhead_)?/, "").replace(
            /_(\w)/g,
            (_, c: string) => c.toUpperCase()
          )
          assert.strictEqual(camel, exported, metricName)
        }
      }))
  })

  describe("observability", () => {
    it.effect("records permit wait, in-flight and waiting gauges", () =>
      Effect.gen(function*() {
        const name = uniqueName("metrics")
        const bulkhead = yield* Bulkhead.make({ name, permits: 1 })
        const a = yield* hold(bulkhead, "a")
        const b = yield* hold(bulkhead, "b")
        assert.strictEqual((yield* metricOf(Bulkhead.inFlight, name)).value, 1)
        assert.strictEqual((yield* metricOf(Bulkhead.waiting, name)).value, 1)
        yield* TestClock.adjust("3 seconds")
        yield* Deferred.succeed(a.finish, undefined)
        yield* yieldTurns()
        assert.strictEqual((yield* metricOf(Bulkhead.waiting, name)).value, 0)
        const histogram = yield* metricOf(Bulkhead.permitWaitSeconds, name)
        // a waited 0 s, b waited 3 s
        assert.strictEqual(histogram.count, 2)
        assert.strictEqual(histogram.sum, 3)
        assert.strictEqual(histogram.max, 3)
        yield* Deferred.succeed(b.finish, undefined)
        yield* yieldTurns()
        assert.strictEqual((yield* metricOf(Bulkhead.inFlight, name)).value, 0)
      }))

    it.effect("records into the metric registry of the fiber that made it", () =>
      Effect.gen(function*() {
        const registry = new Map()
        const own = Effect.provideService(Metric.MetricRegistry, registry)
        const name = uniqueName("registry")
        const bulkhead = yield* Bulkhead.make({ name, permits: 2 }).pipe(own)
        // run from a fiber with the default registry: the bulkhead's own still gets the wait
        yield* bulkhead.run(Effect.void)
        assert.strictEqual((yield* metricOf(Bulkhead.permitWaitSeconds, name).pipe(own)).count, 1)
        assert.strictEqual((yield* metricOf(Bulkhead.permitWaitSeconds, name)).count, 0)
        assert.strictEqual((yield* metricOf(Bulkhead.permits, name).pipe(own)).value, 2)
      }))

    it.effect("annotates the current span with the permit wait", () =>
      Effect.gen(function*() {
        const bulkhead = yield* Bulkhead.make({ name: uniqueName("span"), permits: 1 })
        const a = yield* hold(bulkhead, "a")
        const fiber = yield* bulkhead.run(Effect.currentSpan).pipe(Effect.withSpan("call"), Effect.forkChild)
        yield* yieldTurns()
        yield* TestClock.adjust("250 millis")
        yield* Deferred.succeed(a.finish, undefined)
        const span = yield* Fiber.join(fiber)
        assert.strictEqual((span as Tracer.Span).attributes.get("sluice.bulkhead.permit_wait_ms"), 250)
      }))
  })
})
