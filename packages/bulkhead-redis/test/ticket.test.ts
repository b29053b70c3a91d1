/**
 * A queued ticket's wait (`awaitOutcome`) and its end (`settle`): the one-waiter signal that takes
 * the place of a `Deferred` per ticket. No Redis: the ticket alone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as T from "../src/internal/ticket.js"

/** A fiber waiting for the ticket's outcome, suspended in its wait. */
const waiterOf = (ticket: T.Ticket) =>
  Effect.gen(function*() {
    const waiter = yield* Effect.fork(T.awaitOutcome(ticket))
    yield* Effect.yieldNow()
    return waiter
  })

describe("ticket wait", () => {
  it.effect("settled before the wait: the wait ends at once with the outcome", () =>
    Effect.gen(function*() {
      const granted = T.make("m", 1)
      T.settle(granted, true)
      assert.isTrue(yield* T.awaitOutcome(granted))
      const lost = T.make("m", 1)
      T.settle(lost, false)
      assert.isFalse(yield* T.awaitOutcome(lost))
    }))

  it.effect("settled during the wait: the waiter wakes with the outcome", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      assert.isDefined(ticket.wake)
      T.settle(ticket, true)
      assert.isTrue(yield* Fiber.join(waiter))
      assert.isUndefined(ticket.wake)
    }))

  it.effect("the first outcome stands: a second settle changes nothing", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      T.settle(ticket, false)
      T.settle(ticket, true)
      assert.isFalse(yield* Fiber.join(waiter))
      assert.isFalse(ticket.outcome)
    }))

  it.effect("an interrupted wait leaves no waiter behind, and a later settle wakes nobody", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      const exit = yield* Fiber.interrupt(waiter)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.isUndefined(ticket.wake)
      T.settle(ticket, true)
      assert.isTrue(ticket.outcome)
    }))
})
