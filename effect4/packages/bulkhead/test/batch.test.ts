/**
 * A bulkhead bounds concurrency, not work: the batch helpers must also keep fibers and read-ahead
 * flat, whatever the length of the input.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Effect, Fiber, Stream } from "effect"
import { expectIdle, uniqueName } from "./utils.js"

/**
 * Work that holds its permit for a few scheduler turns, watching how many run at once and which
 * fibers run it (Effect 4 has no Supervisor: the fibers that ran items stand for those forked).
 */
const probe = () => {
  const state = { live: 0, peak: 0, done: 0, sum: 0, fibers: new Set<number>() }
  const work = (n: number) =>
    Effect.suspend(() => {
      state.live++
      state.peak = Math.max(state.peak, state.live)
      const fiber = Fiber.getCurrent()
      if (fiber !== undefined) state.fibers.add(fiber.id)
      return Effect.repeat(Effect.yieldNow, { times: n % 3 })
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        state.live--
        state.done++
        state.sum += n
      })),
      Effect.as(n * 2)
    )
  return { state, work }
}

describe("forEach", () => {
  it.effect("runs every item once, through fixed workers that pull lazily", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("foreach"), permits: 4 })
      const { state, work } = probe()
      let pulled = 0
      let worstAhead = 0
      function* items() {
        for (let i = 1; i <= 100_000; i++) {
          pulled++
          worstAhead = Math.max(worstAhead, pulled - state.done)
          yield i
        }
      }
      yield* Bulkhead.forEach(items(), bulkhead, work)
      assert.strictEqual(state.done, 100_000)
      assert.strictEqual(state.sum, (100_000 * 100_001) / 2)
      assert.strictEqual(state.peak, 4)
      // the iterator is read only as workers free up: never more than the 4 workers ahead
      assert.isAtMost(worstAhead, 4)
      // 100,000 items, yet only the 4 workers ran them
      assert.strictEqual(state.fibers.size, 4)
      yield* expectIdle(bulkhead)
    }))

  it.effect("the first failure interrupts the workers, returns their permits, and stops reading", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("foreach-fail"), permits: 3 })
      let pulled = 0
      function* items() {
        for (let i = 1; i <= 1_000_000; i++) {
          pulled++
          yield i
        }
      }
      const error = yield* Bulkhead.forEach(
        items(),
        bulkhead,
        (n) => (n === 50 ? Effect.fail(`item ${n} failed`) : Effect.yieldNow),
        { workers: 3 }
      ).pipe(Effect.flip)
      assert.strictEqual(error, "item 50 failed")
      assert.isBelow(pulled, 60)
      yield* expectIdle(bulkhead)
    }))

  it.effect("workers and permits are options; bad values are defects", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("foreach-opts"), permits: 4 })
      const { state, work } = probe()
      yield* Bulkhead.forEach([1, 2, 3, 4, 5, 6, 7, 8], bulkhead, work, { workers: 8, permits: 2 })
      // 8 workers, but each item costs 2 of 4 permits: 2 at once
      assert.strictEqual(state.peak, 2)
      const defect = yield* Bulkhead.forEach([1], bulkhead, work, { workers: 0 }).pipe(Effect.exit)
      assert.match(String(defect), /workers must be an integer ≥ 1, got 0/)
    }))
})

describe("mapStream", () => {
  it.effect("maps every element with bounded read-ahead and a fixed pool of workers", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("stream"), permits: 4 })
      const { state, work } = probe()
      let pulled = 0
      let emitted = 0
      let worstAhead = 0
      const total = yield* Stream.range(1, 50_000).pipe(
        Stream.tap(() =>
          Effect.sync(() => {
            pulled++
            worstAhead = Math.max(worstAhead, pulled - emitted)
          })
        ),
        Bulkhead.mapStream(bulkhead, work, { buffer: 8 }),
        Stream.tap(() => Effect.sync(() => emitted++)),
        Stream.runFold(() => 0, (acc, n) => acc + n)
      )
      assert.strictEqual(total, 50_000 * 50_001)
      assert.strictEqual(state.done, 50_000)
      assert.strictEqual(state.peak, 4)
      // inbox (8) + the workers (4) + outbox (8) + one element on its way in
      assert.isAtMost(worstAhead, 8 + 4 + 8 + 1)
      // 50,000 elements, yet only the 4 workers ran them
      assert.strictEqual(state.fibers.size, 4)
      yield* expectIdle(bulkhead)
    }), 30_000) // 50,000 elements: seconds of work on a loaded machine, not a timing assertion

  it.effect("a failing item fails the stream and every permit comes back", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("stream-fail"), permits: 2 })
      const error = yield* Stream.range(1, 1_000).pipe(
        Bulkhead.mapStream(bulkhead, (n) => (n === 10 ? Effect.fail(`item ${n} failed`) : Effect.succeed(n))),
        Stream.runDrain,
        Effect.flip
      )
      assert.strictEqual(error, "item 10 failed")
      yield* expectIdle(bulkhead)
    }))

  it.effect("a failing source fails the stream; an empty source ends it", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("stream-src"), permits: 2 })
      const error = yield* Stream.concat(Stream.make(1, 2, 3), Stream.fail("source broke")).pipe(
        Bulkhead.mapStream(bulkhead, Effect.succeed),
        Stream.runDrain,
        Effect.flip
      )
      assert.strictEqual(error, "source broke")
      const empty = yield* Stream.empty.pipe(Bulkhead.mapStream(bulkhead, Effect.succeed), Stream.runCollect)
      assert.strictEqual(empty.length, 0)
      yield* expectIdle(bulkhead)
    }))

  it.effect("a consumer that stops early interrupts the workers, which return their permits", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("stream-take"), permits: 3 })
      const first = yield* Stream.range(1, 1_000_000).pipe(
        Bulkhead.mapStream(bulkhead, (n) => Effect.as(Effect.yieldNow, n)),
        Stream.take(5),
        Stream.runCollect
      )
      assert.strictEqual(first.length, 5)
      yield* expectIdle(bulkhead)
    }))
})
