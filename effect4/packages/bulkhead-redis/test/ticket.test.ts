/**
 * A queued ticket's wait (`woken`) and its end (`wake`): the one-waiter callback that takes the
 * place of a `Deferred` per ticket. No Redis: the ticket alone (core's, its wait this line's).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as T from "../src/internal/ticket.js"

/** A fiber waiting for the ticket's wake, suspended in its wait. */
const waiterOf = (ticket: T.FleetTicket) =>
  Effect.gen(function*() {
    const waiter = yield* Effect.forkChild(T.woken(ticket))
    yield* Effect.yieldNow
    return waiter
  })

describe("ticket wait", () => {
  it.effect("woken before the wait: the wait ends at once with the outcome", () =>
    Effect.gen(function*() {
      const granted = T.make("m", 1)
      T.wake(granted, true)
      assert.isTrue(yield* T.woken(granted))
      const lost = T.make("m", 1)
      T.wake(lost, false)
      assert.isFalse(yield* T.woken(lost))
    }))

  it.effect("woken during the wait: the waiter wakes with the outcome", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      assert.isDefined(ticket.resume)
      T.wake(ticket, true)
      assert.isTrue(yield* Fiber.join(waiter))
      assert.isUndefined(ticket.resume)
    }))

  it.effect("the first wake stands: a second changes nothing", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      T.wake(ticket, false)
      T.wake(ticket, true)
      assert.isFalse(yield* Fiber.join(waiter))
      assert.isFalse(ticket.outcome)
    }))

  it.effect("an interrupted wait leaves no waiter behind, and a later wake resumes nobody", () =>
    Effect.gen(function*() {
      const ticket = T.make("m", 1)
      const waiter = yield* waiterOf(ticket)
      yield* Fiber.interrupt(waiter)
      const exit = yield* Fiber.await(waiter)
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.isUndefined(ticket.resume)
      T.wake(ticket, true)
      assert.isTrue(ticket.outcome)
    }))
})
