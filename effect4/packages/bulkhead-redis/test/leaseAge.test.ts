/**
 * How old a lease is, as its process sees it: from the moment the script that extended it was
 * sent, not from when its reply was read. A process paused between the two (a long GC pause, a
 * SIGSTOP) reads a reply about a lease that has been running out meanwhile; were it counted from
 * the reply, the paused process would hand over permits whose leases Redis has already ended.
 *
 * No Redis: a connection whose replies the test hands over itself, after moving the clock on.
 */
import { assert, describe, it } from "@effect/vitest"
import * as S from "@sluice/core/FleetScripts"
import type * as Connection from "@sluice/redis/RedisConnection"
import { Context, Effect, Fiber, Metric } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { Impl, loadScripts } from "../src/internal/core.js"
import { resolve } from "../src/internal/settings.js"
import * as T from "../src/internal/ticket.js"

const TTL = 3000
/** Longer than two thirds of the TTL: a ticket renewed this long ago takes no part in a hand-over. */
const PAUSE = "5 seconds"

/** A bulkhead instance on a connection whose script replies wait for `answer`. */
const instance = Effect.gen(function*() {
  const pending: Array<(reply: unknown) => void> = []
  const connection = {
    unsafeRunScript: () => new Promise<unknown>((answer) => pending.push(answer))
  } as unknown as Connection.Service
  const impl = new Impl(
    resolve({ name: "lease-age", permits: 1, leaseTtl: TTL }),
    connection,
    loadScripts(),
    yield* Effect.clockWith(Effect.succeed),
    Context.make(Metric.MetricRegistry, yield* Metric.MetricRegistry)
  )
  /** The next script's reply, once the script has been sent. */
  const answer = (reply: unknown) =>
    Effect.gen(function*() {
      while (pending.length === 0) yield* Effect.promise(() => new Promise((sent) => setImmediate(sent)))
      pending.shift()!(reply)
    })
  return { impl, answer }
})

/** A holder of one permit (ticket 1) and the instance's oldest waiter behind it (ticket 2). */
const holderAndWaiter = (impl: Impl) => {
  const holder = T.make(impl.mark, 1)
  holder.member = `1:1:${TTL}:${holder.nonce}`
  holder.state = T.HELD
  const waiter = T.make(impl.mark, 1)
  waiter.member = `2:1:${TTL}:${waiter.nonce}`
  waiter.state = T.QUEUED
  for (const ticket of [holder, waiter]) impl.tickets.set(ticket.nonce, ticket)
  impl.waiting.set(waiter.nonce, waiter)
  // every waiting ticket below 3 is this instance's: the waiter is the fleet's oldest
  impl.runLimit = 3
  return { holder, waiter }
}

describe("a lease's age", () => {
  it.effect("a renewal read after a pause counts from when it was sent: no hand-over from the paused process", () =>
    Effect.gen(function*() {
      const { answer, impl } = yield* instance
      const { holder, waiter } = holderAndWaiter(impl)
      const renewal = yield* Effect.forkChild(impl.renew([holder, waiter]))
      yield* TestClock.adjust(PAUSE)
      yield* answer([-1, "h", "w"])
      yield* Fiber.join(renewal)
      assert.deepStrictEqual([holder.renewedAt, waiter.renewedAt], [0, 0])
      const now = impl.clock.currentTimeMillisUnsafe()
      assert.isUndefined(impl.heirOf(holder, now))
      // the same renewal answered at once makes both fresh, and the waiter the holder's heir
      const again = yield* Effect.forkChild(impl.renew([holder, waiter]))
      yield* answer([-1, "h", "w"])
      yield* Fiber.join(again)
      assert.deepStrictEqual([holder.renewedAt, waiter.renewedAt], [now, now])
      assert.strictEqual(impl.heirOf(holder, now), waiter)
    }))

  it.effect("a ticket queued by a reply read after a pause is as old as the script that queued it", () =>
    Effect.gen(function*() {
      const { answer, impl } = yield* instance
      const ticket = T.make(impl.mark, 1)
      impl.tickets.set(ticket.nonce, ticket)
      const asking = yield* Effect.forkChild(impl.submit("acquire", S.ACQUIRE, ticket.nonce, "1"))
      // sent at the end of this event-loop turn, at 0; its reply is read 5 s later
      yield* Effect.promise(() => new Promise((sent) => setImmediate(sent)))
      yield* TestClock.adjust(PAUSE)
      // the batch's reply: no grants, no head run, then the acquire's: queued, 1 of 1 in use, nobody ahead
      yield* answer([[], 0, [S.ACQUIRE_QUEUED, `7:1:${TTL}:${ticket.nonce}`, 1, 1, 0]])
      yield* Fiber.join(asking)
      assert.strictEqual(ticket.state, T.QUEUED)
      assert.strictEqual(ticket.renewedAt, 0)
    }))
})
