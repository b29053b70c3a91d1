/**
 * The circuit breaker's contract, run through a provider on each breaker it takes: sluice's own
 * (the core state machine) and Effect 4's `CircuitBreaker` through `CircuitBreaker.fromEffect`.
 * Each subject says how it is made and how its refusal reads; the rules are the same.
 */
import { assert, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import type { Scope } from "effect"
import { Data, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { uniqueName, yieldTurns } from "./utils.js"

class Down extends Data.TaggedError("Down") {}

/** How a subject's refusal reads: the circuit's state it names, or its own tag. */
export type Refusal = "open" | "half-open" | string

export interface Subject {
  readonly label: string
  /** Opens after `failures` in a row, for one second. */
  readonly consecutive: (failures: number) => Effect.Effect<Provider.Options["circuitBreaker"], never, Scope.Scope>
  /** Opens at a failure ratio over the last `window` calls, once `minimumCalls` are in it, for one second. */
  readonly ratio: (
    ratio: number,
    window: number,
    minimumCalls: number
  ) => Effect.Effect<Provider.Options["circuitBreaker"], never, Scope.Scope>
  readonly refusal: (error: unknown) => Refusal
  /** The refusal while the probe is in flight: sluice's `CircuitOpen` half-open, or Effect's own. */
  readonly probing: Refusal
  /**
   * The circuit after a success that leaves the ratio window over the ratio: sluice opens only on
   * a failure, Effect's rate policy trips on any outcome.
   */
  readonly afterSuccessOverRatio: "closed" | "open"
}

const providerWith = (circuitBreaker: Provider.Options["circuitBreaker"]) =>
  Provider.make({ name: uniqueName("contract"), bulkhead: { permits: 4 }, circuitBreaker }) as Effect.Effect<
    Provider.Provider<unknown>,
    never,
    Scope.Scope
  >

const fail = (provider: Provider.Provider<unknown>) => Effect.flip(provider.call(Effect.fail(new Down())))

export const breakerContract = (subject: Subject) => {
  it.effect(`${subject.label}: trips after n failures in a row, refuses at once, and a probe closes it`, () =>
    Effect.gen(function*() {
      const provider = yield* providerWith(yield* subject.consecutive(3))
      yield* fail(provider)
      yield* fail(provider)
      // a success in between starts the count again
      yield* provider.call(Effect.void)
      for (let i = 0; i < 2; i++) assert.strictEqual(((yield* fail(provider)) as Down)._tag, "Down")
      assert.strictEqual((yield* provider.stats).circuit, "closed")
      assert.strictEqual(((yield* fail(provider)) as Down)._tag, "Down")
      assert.strictEqual((yield* provider.stats).circuit, "open")
      let reached = 0
      const refused = yield* Effect.flip(provider.call(Effect.sync(() => reached++)))
      assert.strictEqual(subject.refusal(refused), "open")
      assert.strictEqual(reached, 0)
      assert.strictEqual((yield* provider.stats).outcomes.circuit_open, 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* provider.call(Effect.succeed("probe")), "probe")
      assert.strictEqual((yield* provider.stats).circuit, "closed")
    }))

  it.effect(`${subject.label}: the ratio counts once minimumCalls are in the window`, () =>
    Effect.gen(function*() {
      const provider = yield* providerWith(yield* subject.ratio(0.5, 4, 3))
      yield* fail(provider)
      yield* fail(provider)
      // two failures of two calls: below minimumCalls, still closed
      assert.strictEqual((yield* provider.stats).circuit, "closed")
      yield* provider.call(Effect.void)
      // 2 failures of 3 calls: over the ratio, now that the window holds minimumCalls
      assert.strictEqual((yield* provider.stats).circuit, subject.afterSuccessOverRatio)
      // 3 of 4: a failure opens it on both
      yield* fail(provider)
      assert.strictEqual((yield* provider.stats).circuit, "open")
      assert.strictEqual(subject.refusal(yield* Effect.flip(provider.call(Effect.void))), "open")
    }))

  it.effect(`${subject.label}: one probe at a time; the others are refused while it runs`, () =>
    Effect.gen(function*() {
      const provider = yield* providerWith(yield* subject.consecutive(1))
      yield* fail(provider)
      yield* TestClock.adjust("1 second")
      const gate = yield* Deferred.make<void>()
      const probe = yield* Effect.forkChild(provider.call(Deferred.await(gate)))
      yield* yieldTurns()
      const refused = yield* Effect.flip(provider.call(Effect.void))
      assert.strictEqual(subject.refusal(refused), subject.probing)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(probe)
      assert.strictEqual((yield* provider.stats).circuit, "closed")
      yield* provider.call(Effect.void)
    }))

  it.effect(`${subject.label}: an interrupted probe proves nothing; the next call probes again`, () =>
    Effect.gen(function*() {
      const provider = yield* providerWith(yield* subject.consecutive(1))
      yield* fail(provider)
      yield* TestClock.adjust("1 second")
      const probe = yield* Effect.forkChild(provider.call(Effect.never))
      yield* yieldTurns()
      yield* Fiber.interrupt(probe)
      assert.notStrictEqual((yield* provider.stats).circuit, "open")
      // the slot is free: this call is the probe, and its success closes the circuit
      assert.strictEqual(yield* provider.call(Effect.succeed("second probe")), "second probe")
      assert.strictEqual((yield* provider.stats).circuit, "closed")
    }))
}
