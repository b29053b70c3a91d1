/**
 * The pool's housekeeping belongs to the pool's scope: its idle timer runs on the pool's clock and
 * what it keeps closes with the scope. Effect 4.1 has no `Supervisor`, so the 0.x line's count of
 * fibers by parent is not ported; what they did is asserted where the server sees it. The 0.x
 * line's second case, a body given up on a child fiber, has no port: a refused body is aborted by
 * the close of its attempt's scope (`ProviderHttpClient.test.ts`, "refused at the headers").
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool } from "@sluice/http"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { waitUntilEffect } from "./utils/run.js"
import { testServer } from "./utils/server.js"

describe("supervision", () => {
  it.effect("the pool's idle timer runs on its clock, and what it keeps closes with its scope", () =>
    Effect.gen(function*() {
      const server = yield* testServer({})
      yield* Effect.scoped(
        Effect.gen(function*() {
          const pool = yield* HttpPool.make({ keepAliveTimeout: "10 seconds" })
          assert.include(yield* pool.preconnect(server.url, 2), { opened: 2 })
          yield* waitUntilEffect(Effect.sync(() => server.counters.open === 2), "2 connections are open")
          // the timer runs on the TestClock: nothing closes before keepAliveTimeout
          yield* TestClock.adjust("9 seconds")
          assert.strictEqual((yield* pool.stats)[server.url]?.preconnected, 2)
          yield* TestClock.adjust("1 second")
          yield* waitUntilEffect(Effect.sync(() => server.counters.open === 0), "the idle connections are closed")
        })
      )
      // a second pool's connections, the clock never moved: closed by the scope alone
      yield* Effect.scoped(
        Effect.gen(function*() {
          const pool = yield* HttpPool.make({ keepAliveTimeout: "10 seconds" })
          assert.include(yield* pool.preconnect(server.url, 2), { opened: 2 })
          yield* waitUntilEffect(Effect.sync(() => server.counters.open === 2), "2 more connections are open")
        })
      )
      yield* waitUntilEffect(Effect.sync(() => server.counters.open === 0), "the scope closed them")
      assert.strictEqual(server.counters.connections, 4)
    }).pipe(Effect.scoped))
})
