// @sluice/bulkhead: a bulkhead from its service's layer, a run, both refusals (typed, and printed
// with their tag first) and priority lanes.
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { check } from "../check.js"

class Geocoder extends Bulkhead.Tag("geocoder")<Geocoder>() {}

// until `bulkhead` has `inFlight` permits held and `waiting` callers queued, so that what follows
// meets a known queue
const settled = (bulkhead: Bulkhead.Bulkhead, inFlight: number, waiting: number) =>
  bulkhead.stats.pipe(
    Effect.repeat({
      until: (stats) => stats.inFlight === inFlight && stats.waiting === waiting,
      schedule: Schedule.spaced("1 millis")
    }),
    Effect.timeout("5 seconds")
  )

const refusals = Effect.gen(function*() {
  const geocoder = yield* Geocoder
  yield* check(geocoder.name === "geocoder", "the tag's id names the bulkhead", geocoder.name)
  const doubled = yield* Effect.forEach([1, 2, 3, 4, 5], (n) => geocoder.run(Effect.succeed(n * 2)), {
    concurrency: "unbounded"
  })
  yield* check(doubled.join() === "2,4,6,8,10", "runs every call under the bound", doubled)

  // one holder until released, one waiter: the queue is full for the next caller
  const release = yield* Deferred.make<void>()
  const holder = yield* Effect.forkChild(geocoder.run(Deferred.await(release)))
  const waiter = yield* Effect.forkChild(Effect.flip(geocoder.run(Effect.void, { maxWait: "50 millis" })))
  yield* settled(geocoder, 1, 1)
  const full = yield* Effect.flip(geocoder.run(Effect.void))
  yield* check(full._tag === "BulkheadFull", "a caller at a full queue is refused", full._tag)
  yield* check(
    String(full).startsWith(`BulkheadFull: bulkhead "geocoder" is full`),
    "String(BulkheadFull) starts with its tag and names the bulkhead",
    String(full)
  )
  yield* check(full instanceof Bulkhead.BulkheadFull, "BulkheadFull is the exported class")
  const timeout = yield* Fiber.join(waiter)
  yield* check(timeout._tag === "PermitWaitTimeout", "a waiter past its maxWait gives up", timeout._tag)
  yield* check(
    String(timeout).startsWith(`PermitWaitTimeout: bulkhead "geocoder" gave up after waiting 50ms`),
    "String(PermitWaitTimeout) starts with its tag, the bulkhead and the wait",
    String(timeout)
  )
  // typed: catchTag narrows the union to the refusal it handles
  const handled = yield* geocoder.run(Effect.void, { maxWait: "1 millis" }).pipe(
    Effect.as("ran"),
    Effect.catchTag("PermitWaitTimeout", (e) => Effect.succeed(`waited ${e.requested} permit too long`))
  )
  yield* check(handled === "waited 1 permit too long", "catchTag handles PermitWaitTimeout", handled)
  yield* Deferred.succeed(release, undefined)
  yield* Fiber.join(holder)
  const stats = yield* geocoder.stats
  yield* check(stats.inFlight === 0 && stats.waiting === 0, "every permit is back", stats)
}).pipe(Effect.provide(Geocoder.layer({ permits: 1, maxWaiting: 1 })))

// interactive before batch: with the one permit held, a batch call queued first is served after an
// interactive one queued later
const lanes = Effect.gen(function*() {
  const bulkhead = yield* Bulkhead.make({
    name: "llm",
    permits: 1,
    lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 minute" } })
  })
  const order: Array<string> = []
  const release = yield* Deferred.make<void>()
  const holder = yield* Effect.forkChild(bulkhead.run(Deferred.await(release)))
  yield* settled(bulkhead, 1, 0)
  const batch = yield* Effect.forkChild(bulkhead.run(Effect.sync(() => order.push("batch")), { lane: "batch" }))
  yield* settled(bulkhead, 1, 1)
  const chat = yield* Effect.forkChild(
    bulkhead.run(Effect.sync(() => order.push("interactive")), { lane: "interactive" })
  )
  yield* settled(bulkhead, 1, 2)
  yield* Deferred.succeed(release, undefined)
  yield* Fiber.join(holder)
  yield* Fiber.join(batch)
  yield* Fiber.join(chat)
  yield* check(order.join() === "interactive,batch", "the interactive lane goes first", order)
  const stats = yield* bulkhead.stats
  yield* check(
    stats.lanes?.map((lane) => `${lane.name}:${lane.granted}`).join() === "interactive:1,batch:2",
    "each lane counts its grants",
    stats.lanes
  )
  yield* check(bulkhead.laneOf?.(undefined)?.name === "batch", "a call naming no lane waits in the last")
})

export const checks = Effect.andThen(refusals, lanes)
