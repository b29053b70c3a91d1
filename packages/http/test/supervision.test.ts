/**
 * Every fiber the pool and the client start is supervised: housekeeping is a child of the pool's
 * layer and ends with its scope, a caller's work is a child of the caller. A supervisor records
 * each fiber started, with its parent; a fiber started with `Runtime.runFork` has none.
 */
import { HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import type { Context, Exit, Fiber } from "effect"
import { Effect, Option, Schema, Supervisor, TestClock } from "effect"
import { run, uniqueName, waitUntil, waitUntilEffect } from "./utils/run.js"
import { testServer } from "./utils/server.js"

class Recorder extends Supervisor.AbstractSupervisor<void> {
  readonly started: Array<{ readonly fiber: Fiber.RuntimeFiber<unknown, unknown>; readonly orphan: boolean }> = []
  readonly ended = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  value = Effect.void
  override onStart<A, E, R>(
    _context: Context.Context<R>,
    _effect: Effect.Effect<A, E, R>,
    parent: Option.Option<Fiber.RuntimeFiber<unknown, unknown>>,
    fiber: Fiber.RuntimeFiber<A, E>
  ): void {
    this.started.push({ fiber: fiber as Fiber.RuntimeFiber<unknown, unknown>, orphan: Option.isNone(parent) })
  }
  override onEnd<A, E>(_exit: Exit.Exit<A, E>, fiber: Fiber.RuntimeFiber<A, E>): void {
    this.ended.add(fiber as Fiber.RuntimeFiber<unknown, unknown>)
  }
  get orphans() {
    return this.started.filter((s) => s.orphan).length
  }
  get running() {
    return this.started.filter((s) => !this.ended.has(s.fiber)).length
  }
}

describe("supervision", () => {
  it.effect("the pool's idle timer is one fiber of the pool's scope, on its clock, interrupted when it closes", () =>
    Effect.gen(function*() {
      const recorder = new Recorder()
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
          assert.strictEqual(recorder.orphans, 0, "a fiber without a parent")
          assert.isAbove(recorder.running, 0, "the housekeeping fiber runs while the pool is open")
        }).pipe(Effect.supervised(recorder))
      )
      assert.isAbove(recorder.started.length, 0)
      assert.strictEqual(recorder.running, 0, "a fiber outlived the pool's scope")
    }).pipe(Effect.scoped))

  it.live("a body given up unread is read on a child of the caller, and aborted", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        "/declared-stalled": (_req, res) => {
          res.setHeader("content-length", String(64 * 1024))
          res.flushHeaders()
        }
      })
      const provider = yield* Provider.make({ name: uniqueName("abandon"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      const recorder = new Recorder()
      const error = yield* Effect.flip(
        client.json(HttpClientRequest.get("/declared-stalled"), Schema.Unknown).pipe(Effect.supervised(recorder))
      )
      assert.strictEqual(error._tag, "BodyTooLarge")
      assert.isAbove(recorder.started.length, 0)
      assert.strictEqual(recorder.orphans, 0, "a fiber without a parent")
      yield* waitUntil(() => recorder.running === 0, "every fiber of the call has ended")
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))
})
