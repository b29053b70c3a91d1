/**
 * Permit accounting under interruption, step by step and at random: no sequence of
 * interruptions, failures, timeouts and resizes may leak, duplicate or reorder a permit.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Cause, Deferred, type Duration, Effect, Exit, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { expectIdle, metricOf, uniqueName, yieldTurns } from "./utils.js"

type Outcome = "succeed" | "fail" | "die"

/** Watches the calls from the inside: what is held, the most ever held, the order of starts. */
class Monitor {
  held = 0
  peak = 0
  ceiling: number
  readonly starts: Array<number> = []
  readonly violations: Array<string> = []
  constructor(permits: number) {
    this.ceiling = permits
  }
  /** A call that runs `steps` scheduler turns while holding its permits, then ends as told. */
  call(index: number, cost: number, steps: number, outcome: Outcome): Effect.Effect<void, string> {
    return Effect.suspend(() => {
      this.held += cost
      this.peak = Math.max(this.peak, this.held)
      if (this.held > this.ceiling) this.violations.push(`call ${index} started with ${this.held} > ${this.ceiling}`)
      this.starts.push(index)
      return Effect.repeat(Effect.yieldNow, { times: steps })
    }).pipe(
      Effect.andThen(
        outcome === "succeed" ? Effect.void : outcome === "fail" ? Effect.fail("failed") : Effect.die(new Error("died"))
      ),
      Effect.ensuring(Effect.sync(() => (this.held -= cost)))
    )
  }
}

describe("interruption sweep", () => {
  const costs = [1, 2, 1, 3, 1, 2, 1]
  const outcomes: ReadonlyArray<Outcome> = ["succeed", "fail", "die"]
  const turns = 40

  /** Without lanes, or with lanes and each call's lane. */
  type Lanes = { readonly lanes: BulkheadLanes.Lanes; readonly laneOf: (i: number) => string } | undefined

  const scenario = (target: number | "all", k: number, maxWait: Duration.Input | undefined, lanes: Lanes) =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({
        name: uniqueName("sweep"),
        permits: 3,
        maxWait,
        ...(lanes === undefined ? {} : { lanes: lanes.lanes })
      })
      const monitor = new Monitor(3)
      const fibers: Array<Fiber.Fiber<void, unknown>> = []
      for (let i = 0; i < costs.length; i++) {
        const call = monitor.call(i, costs[i], 1 + (i % 3), outcomes[i % outcomes.length])
        const lane = lanes === undefined ? {} : { lane: lanes.laneOf(i) }
        fibers.push(yield* Effect.forkChild(bulkhead.run(call, { permits: costs[i], ...lane })))
      }
      // k scheduler turns: the fibers are somewhere in acquiring, holding or releasing
      yield* yieldTurns(k)
      if (target === "all") {
        yield* Fiber.interruptAll(fibers)
      } else {
        yield* Fiber.interrupt(fibers[target])
      }
      for (const fiber of fibers) yield* Fiber.await(fiber)
      assert.deepStrictEqual(monitor.violations, [], `target ${target}, k ${k}`)
      assert.isAtMost(monitor.peak, 3)
      assert.strictEqual(monitor.held, 0)
      // starts follow arrival order: nobody overtook anybody (lanes have orders of their own)
      if (lanes === undefined) {
        assert.deepStrictEqual(monitor.starts, [...monitor.starts].sort((a, b) => a - b), `target ${target}, k ${k}`)
      }
      yield* expectIdle(bulkhead)
    })

  const laneVariants: ReadonlyArray<readonly [string, Lanes]> = [
    ["no lanes", undefined],
    ["priority lanes", {
      lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 second" } }),
      laneOf: (i) => (i % 2 === 0 ? "batch" : "interactive")
    }],
    ["fair-share lanes", {
      lanes: BulkheadLanes.fairShare({ weights: { t0: 2 } }),
      laneOf: (i) => `t${i % 3}`
    }]
  ]

  for (const [variant, lanes] of laneVariants) {
    for (const maxWait of [undefined, "1 minute"] as const) {
      it.effect(`interrupting any one call at any turn leaks nothing (${variant}, maxWait ${maxWait ?? "none"})`, () =>
        Effect.gen(function*() {
          for (let target = 0; target < costs.length; target++) {
            for (let k = 0; k <= turns; k++) yield* scenario(target, k, maxWait, lanes)
          }
        }))

      it.effect(`interrupting every call at any turn leaks nothing (${variant}, maxWait ${maxWait ?? "none"})`, () =>
        Effect.gen(function*() {
          for (let k = 0; k <= turns; k++) yield* scenario("all", k, maxWait, lanes)
        }))
    }
  }

  // A holder lets go at the very instant a waiter's budget ends. Effect 4's TestClock wakes the
  // sleepers due at one instant in the order they began (Effect 3's: newest first), so which of the
  // two runs first is fixed by which sleep began first:
  // both orders are tested, each with its own outcome, at every scheduler turn before the clock moves.
  const sameInstant = (releaseFirst: boolean, k: number) =>
    Effect.gen(function*() {
      const name = uniqueName("race")
      const bulkhead = yield* Bulkhead.make({ name, permits: 1, maxWait: "1 second" })
      const holder = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(bulkhead.run(Deferred.await(holder)))
      yield* yieldTurns(3)
      const letGo = Effect.andThen(Effect.sleep("1 second"), Deferred.succeed(holder, undefined))
      // the release's sleep begun before the waiter's budget wakes before it, and the reverse
      if (releaseFirst) yield* Effect.forkChild(letGo)
      yield* yieldTurns(3)
      const waiter = yield* Effect.forkChild(bulkhead.run(Effect.succeed("ran")))
      yield* yieldTurns(3)
      if (!releaseFirst) yield* Effect.forkChild(letGo)
      yield* yieldTurns(k)
      yield* TestClock.adjust("1 second")
      yield* Fiber.await(first)
      const exit = yield* Fiber.await(waiter)
      const timeouts = (yield* metricOf(Bulkhead.rejectedTotal, name, { reason: "timeout" })).count
      if (releaseFirst) {
        // the grant came first: the waiter holds the permit and runs; its budget then finds nothing to end
        assert.deepStrictEqual(exit, Exit.succeed("ran"), `k ${k}`)
        assert.strictEqual(timeouts, 0, `k ${k}`)
      } else {
        // the budget ended first: the waiter left the queue, and the release found nobody to hand to
        if (Exit.isSuccess(exit)) return assert.fail(`k ${k}: the waiter got the permit after its budget ended`)
        const error = Cause.findError(exit.cause)
        assert.isTrue(Result.isSuccess(error) && error.success._tag === "PermitWaitTimeout", `k ${k}: ${exit.cause}`)
        assert.strictEqual(timeouts, 1, `k ${k}`)
      }
      yield* expectIdle(bulkhead)
    })

  it.effect("a grant in the same instant as the waiter's timeout, but first, wins: the waiter runs", () =>
    Effect.gen(function*() {
      for (let k = 0; k <= 10; k++) yield* sameInstant(true, k)
    }))

  it.effect("a timeout in the same instant as a grant, but first, wins: PermitWaitTimeout, nothing held", () =>
    Effect.gen(function*() {
      for (let k = 0; k <= 10; k++) yield* sameInstant(false, k)
    }))
})

// ---------------------------------------------------------------------------------------------
// property: random sequences of acquire, finish, interrupt, timeout and resize
// ---------------------------------------------------------------------------------------------

type Command =
  | { readonly _tag: "call"; readonly cost: number; readonly maxWaitMs: number | null }
  | { readonly _tag: "finish"; readonly index: number; readonly outcome: Outcome }
  | { readonly _tag: "interrupt"; readonly index: number }
  | { readonly _tag: "tick"; readonly millis: number }
  | { readonly _tag: "resize"; readonly permits: number }
  | { readonly _tag: "yield"; readonly turns: number }

const maxPermits = 4

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("call" as const),
      cost: fc.integer({ min: 1, max: maxPermits }),
      maxWaitMs: fc.option(fc.integer({ min: 0, max: 3000 }))
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("finish" as const),
      index: fc.nat(40),
      outcome: fc.constantFrom<Outcome>("succeed", "fail", "die")
    })
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("interrupt" as const), index: fc.nat(40) }) },
  {
    weight: 2,
    arbitrary: fc.record({ _tag: fc.constant("tick" as const), millis: fc.integer({ min: 0, max: 2000 }) })
  },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("resize" as const), permits: fc.integer({ min: 1, max: maxPermits }) })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("yield" as const), turns: fc.integer({ min: 0, max: 4 }) }) }
)

/**
 * One run of the property on a TestClock of its own, as `it.effect.prop` gave each run on Effect 3:
 * fast-check itself drives the runs (Effect 4's `it.effect.prop` takes its own Arbitrary module,
 * and the line keeps fast-check 3.23.2 so that a seed replays on both).
 */
const effectProperty = <A>(
  arbitrary: fc.Arbitrary<A>,
  run: (input: A) => Effect.Effect<void, unknown>,
  parameters: fc.Parameters<[A]>
) =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(arbitrary, (input) => Effect.runPromise(run(input).pipe(Effect.provide(TestClock.layer())))),
      parameters
    )
  )

describe("property", () => {
  it.effect(
    "in flight never exceeds permits, grants follow arrival order, and all permits come back",
    () =>
      effectProperty(
        fc.record({ initial: fc.integer({ min: 1, max: maxPermits }), commands: fc.array(command, { maxLength: 40 }) }),
        ({ commands, initial }) =>
          Effect.gen(function*() {
            const bulkhead = yield* Bulkhead.make({ name: uniqueName("prop"), permits: initial, maxPermits })
            const monitor = new Monitor(initial)
            let permits = initial
            const calls: Array<{ fiber: Fiber.Fiber<void, unknown>; finish: Deferred.Deferred<Outcome> }> = []
            for (const cmd of commands) {
              switch (cmd._tag) {
                case "call": {
                  const finish = yield* Deferred.make<Outcome>()
                  const index = calls.length
                  const body = Effect.suspend(() => {
                    monitor.held += cmd.cost
                    monitor.peak = Math.max(monitor.peak, monitor.held)
                    if (monitor.held > monitor.ceiling) {
                      monitor.violations.push(`call ${index} started holding ${monitor.held} > ${monitor.ceiling}`)
                    }
                    monitor.starts.push(index)
                    return Deferred.await(finish)
                  }).pipe(
                    Effect.flatMap((o) =>
                      o === "succeed" ? Effect.void : o === "fail" ? Effect.fail("failed") : Effect.die(new Error("x"))
                    ),
                    Effect.ensuring(Effect.sync(() => (monitor.held -= cmd.cost)))
                  )
                  const fiber = yield* Effect.forkChild(
                    bulkhead.run(body, {
                      permits: cmd.cost,
                      maxWait: cmd.maxWaitMs === null ? undefined : cmd.maxWaitMs
                    })
                  )
                  calls.push({ fiber, finish })
                  break
                }
                case "finish": {
                  const call = calls[cmd.index % Math.max(calls.length, 1)]
                  if (call) yield* Deferred.succeed(call.finish, cmd.outcome)
                  break
                }
                case "interrupt": {
                  const call = calls[cmd.index % Math.max(calls.length, 1)]
                  if (call) yield* Fiber.interrupt(call.fiber)
                  break
                }
                case "tick":
                  yield* TestClock.adjust(cmd.millis)
                  break
                case "resize":
                  // a grant made under the old size may start after the shrink: allow the larger of the two
                  monitor.ceiling = Math.max(permits, cmd.permits)
                  permits = cmd.permits
                  yield* bulkhead.resize(cmd.permits)
                  break
                case "yield":
                  yield* yieldTurns(cmd.turns)
                  break
              }
              yield* yieldTurns(10)
              monitor.ceiling = permits
            }
            for (const call of calls) yield* Fiber.interrupt(call.fiber)
            assert.deepStrictEqual(monitor.violations, [])
            assert.strictEqual(monitor.held, 0)
            assert.deepStrictEqual(monitor.starts, [...monitor.starts].sort((a, b) => a - b))
            yield* expectIdle(bulkhead)
          }),
        { numRuns: 1000 }
      ),
    120_000
  )
})
