import { assert, describe, it } from "@effect/vitest"
import { RetryBudget } from "@sluice/provider"
import { Duration, Effect, Fiber, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { uniqueName, yieldTurns } from "./utils.js"

class Flaky {
  readonly _tag = "Flaky"
}

describe("RetryBudget on its own, around any effect", () => {
  it.effect("retries while the window affords it, then RetryBudgetExhausted with the last error", () =>
    Effect.gen(function*() {
      const name = uniqueName("budget")
      const budget = yield* RetryBudget.make({ name, ratio: 0.5, minRetries: 1, window: "10 seconds" })
      let runs = 0
      const failing = Effect.suspend(() => {
        runs++
        return Effect.fail(new Flaky())
      })
      const error = yield* Effect.flip(RetryBudget.withRetryBudget(failing, budget, { times: 5 }))
      assert.strictEqual(error._tag, "RetryBudgetExhausted")
      if (error._tag !== "RetryBudgetExhausted") return
      assert.strictEqual(error.budget, name)
      assert.isUndefined(error.provider)
      assert.isTrue(String(error).startsWith(`RetryBudgetExhausted: retry budget "${name}": attempt 3 refused`))
      assert.strictEqual(error.attempt, 3)
      assert.instanceOf(error.lastError, Flaky)
      assert.deepStrictEqual([error.retries, error.firstAttempts, error.allowed], [1, 1, 1])
      assert.isTrue(Duration.equals(error.window, Duration.seconds(10)))
      assert.strictEqual(runs, 2)
      assert.deepInclude(yield* budget.stats, { firstAttempts: 1, retries: 1, allowed: 1 })
      // the window forgets after 10 s
      yield* TestClock.adjust("10 seconds")
      assert.deepInclude(yield* budget.stats, { firstAttempts: 0, retries: 0 })
    }))

  it.effect("a budget shared by many effects: first attempts buy retries for all", () =>
    Effect.gen(function*() {
      const budget = yield* RetryBudget.make({ name: uniqueName("budget-shared"), ratio: 0.5, minRetries: 0 })
      for (let i = 0; i < 4; i++) yield* RetryBudget.withRetryBudget(Effect.void, budget, {})
      let runs = 0
      const flaky = Effect.suspend(() => ++runs < 3 ? Effect.fail(new Flaky()) : Effect.succeed(runs))
      // 5 first attempts allow 2 retries: enough for this one
      assert.strictEqual(yield* RetryBudget.withRetryBudget(flaky, budget, {}), 3)
      assert.deepInclude(yield* budget.stats, { firstAttempts: 5, retries: 2, allowed: 2 })
    }))

  it.effect("the schedule spaces the retries; `while` chooses what is retried; success is untouched", () =>
    Effect.gen(function*() {
      const budget = yield* RetryBudget.make({ name: uniqueName("budget-schedule"), minRetries: 10 })
      let runs = 0
      const fiber = yield* Effect.forkChild(
        RetryBudget.withRetryBudget(
          Effect.suspend(() => {
            runs++
            return Effect.fail(runs < 3 ? new Flaky() : "fatal")
          }),
          budget,
          { schedule: Schedule.spaced("1 second"), while: (e) => e instanceof Flaky }
        )
      )
      yield* yieldTurns()
      assert.strictEqual(runs, 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(runs, 2)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Effect.flip(Fiber.join(fiber)), "fatal")
      assert.strictEqual(runs, 3)
      assert.strictEqual(yield* RetryBudget.withRetryBudget(Effect.succeed(1), budget, {}), 1)
    }))

  it("invalid options throw, naming the budget and the value", () => {
    assert.throws(() => RetryBudget.unsafeMake({ name: "geo", ratio: 2 }), /retry budget "geo": ratio must be/)
  })
})
