/**
 * The core's permit queue driving Effect 4 fibers: the smallest binding (a waiter is an
 * `Effect.callback`, interruption abandons its ticket), to show that the core runs unchanged on
 * this line's runtime. The bulkhead's own port is step 4 of RFC 0003.
 */
import { assert, describe, it } from "@effect/vitest"
import { PermitQueue, Ticket } from "@sluice/core/PermitQueue"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

class Waiter extends Ticket {
  wake: () => void = () => {}
}

const make = (permits: number) => {
  const queue = new PermitQueue<Waiter>(permits, "fifo", {
    granted: (waiter) => waiter.wake(),
    inFlight: () => {},
    waiting: () => {}
  })
  const acquire = (cost: number) =>
    Effect.suspend(() =>
      queue.tryTake(cost) ? Effect.void : Effect.callback<void>((resume) => {
        const waiter = queue.enqueue(new Waiter(cost))
        waiter.wake = () => resume(Effect.sync(() => queue.hold(waiter)))
        // interrupted while queued: leave; granted but not yet resumed: the permits go back
        return Effect.sync(() => queue.abandon(waiter))
      })
    )
  const withPermits = (cost: number) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.uninterruptibleMask((restore) =>
      restore(acquire(cost)).pipe(
        Effect.andThen(restore(self).pipe(Effect.ensuring(Effect.sync(() => queue.release(cost)))))
      )
    )
  return { queue, withPermits }
}

describe("PermitQueue on Effect 4", () => {
  it.effect("a heavy waiter at the head is not overtaken by a lighter one that arrives later", () =>
    Effect.gen(function*() {
      const { queue, withPermits } = make(3)
      const order: Array<string> = []
      const gate = yield* Deferred.make<void>()
      const holder = yield* Deferred.await(gate).pipe(withPermits(2), Effect.forkChild({ startImmediately: true }))
      const big = yield* Effect.sync(() => order.push("big3")).pipe(
        withPermits(3),
        Effect.forkChild({ startImmediately: true })
      )
      // one permit is free, but a ticket is queued: the newcomer queues behind it
      const small = yield* Effect.sync(() => order.push("small1")).pipe(
        withPermits(1),
        Effect.forkChild({ startImmediately: true })
      )
      assert.deepStrictEqual([queue.inFlight, queue.waiting, queue.waitingPermits], [2, 2, 4])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(big)
      yield* Fiber.join(small)
      assert.deepStrictEqual(order, ["big3", "small1"])
      assert.deepStrictEqual([queue.inFlight, queue.holders, queue.waiting], [0, 0, 0])
    }))

  it.effect("an interrupted waiter leaves the queue and the next one gets the permit", () =>
    Effect.gen(function*() {
      const { queue, withPermits } = make(1)
      const ran: Array<string> = []
      const gate = yield* Deferred.make<void>()
      const holder = yield* Deferred.await(gate).pipe(withPermits(1), Effect.forkChild({ startImmediately: true }))
      const a = yield* Effect.sync(() => ran.push("a")).pipe(
        withPermits(1),
        Effect.forkChild({ startImmediately: true })
      )
      const b = yield* Effect.sync(() => ran.push("b")).pipe(
        withPermits(1),
        Effect.forkChild({ startImmediately: true })
      )
      assert.strictEqual(queue.waiting, 2)
      yield* Fiber.interrupt(a)
      assert.strictEqual(queue.waiting, 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(b)
      assert.deepStrictEqual(ran, ["b"])
      assert.deepStrictEqual([queue.inFlight, queue.holders, queue.waiting], [0, 0, 0])
    }))
})
