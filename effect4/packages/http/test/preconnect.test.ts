/**
 * Connections opened ahead of the calls, against a real HTTP server on 127.0.0.1 that counts the
 * connections it accepts: what is asserted is what the upstream sees.
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Cause, Effect, Exit, Fiber, Logger, Schedule } from "effect"
import { HttpClientRequest } from "effect/http"
import * as net from "node:net"
import { run, uniqueName, waitUntil } from "./utils/run.js"
import { slowBody, testServer } from "./utils/server.js"

/**
 * Until the pool holds no connection opened ahead for `origin`: within a second, well inside the
 * pool's `keepAliveTimeout`, so that only a close seen while waiting can pass it.
 */
const noneWaiting = (pool: HttpPool.Service, origin: string) =>
  Effect.repeat(pool.stats, {
    schedule: Schedule.spaced("2 millis"),
    until: (stats) => (stats[origin]?.preconnected ?? 0) === 0
  }).pipe(
    Effect.timeoutOrElse({
      duration: "1 second",
      orElse: () => Effect.die(new Error(`connections still wait for ${origin}`))
    })
  )

/** A port on 127.0.0.1 that nothing listens on: bound, then closed. */
const closedPort = Effect.callback<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("preconnect", () => {
  it.live("opens the bulkhead's connections when the client is built, and its first calls use them", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(5, 16, 10) })
      const provider = yield* Provider.make({ name: uniqueName("warm"), bulkhead: { permits: 4 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, preconnect: true })
      const pool = yield* HttpPool.HttpPool
      yield* waitUntil(() => server.counters.connections === 4, "the server accepted 4 connections")
      assert.strictEqual(server.counters.requests, 0)
      assert.include((yield* pool.stats)[client.origin], { preconnected: 4, connected: 0 })

      yield* Effect.forEach(Array.from({ length: 4 }), () => client.text(HttpClientRequest.get("/slow")), {
        concurrency: "unbounded"
      })
      assert.strictEqual(server.counters.peak, 4)
      // four calls at once on four connections, none opened for them
      assert.strictEqual(server.counters.connections, 4)
      assert.include((yield* pool.stats)[client.origin], { preconnected: 0, connected: 4 })
    })))

  it.live("a connection the server closes while it waits is not handed to a call", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(1, 16, 1) })
      const pool = yield* HttpPool.HttpPool
      const opened = yield* pool.preconnect(server.url, 2)
      assert.deepStrictEqual(opened, { origin: server.url, requested: 2, opened: 2, failure: undefined })
      yield* waitUntil(() => server.counters.open === 2, "the server accepted both")
      yield* server.closeConnections
      yield* waitUntil(() => server.counters.open === 0, "both connections are closed")
      const provider = yield* Provider.make({ name: uniqueName("closed"), bulkhead: { permits: 2 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      // the closed ones are gone from the pool's count before any call, not found dead by one
      yield* noneWaiting(pool, server.url)
      assert.strictEqual(yield* client.text(HttpClientRequest.get("/slow")), "[                ]")
      assert.strictEqual(server.counters.connections, 3)
    })))

  it.live("bytes that arrive before any request close the connection, and never answer a call", () =>
    run(Effect.gen(function*() {
      // the first two connections answer at once, unasked; later ones answer their request
      let accepted = 0
      const server = yield* Effect.acquireRelease(
        Effect.callback<net.Server>((resume) => {
          const s = net.createServer((socket) => {
            if (++accepted <= 2) {
              socket.write("HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nunasked")
              return
            }
            socket.once(
              "data",
              () => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\nreal")
            )
          })
          s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) => Effect.callback<void>((resume) => void s.close(() => resume(Effect.void)))
      )
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
      const pool = yield* HttpPool.HttpPool
      assert.include(yield* pool.preconnect(url, 2), { opened: 2 })
      yield* noneWaiting(pool, url)
      const provider = yield* Provider.make({ name: uniqueName("unasked"), bulkhead: { permits: 2 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: url })
      assert.strictEqual(yield* client.text(HttpClientRequest.get("/")), "real")
      assert.strictEqual(accepted, 3)
    })))

  it.live("asks for no more than the origin's pool could take, and closes what waits with the scope", () =>
    Effect.gen(function*() {
      const server = yield* testServer({})
      yield* run(
        Effect.gen(function*() {
          const pool = yield* HttpPool.HttpPool
          const first = yield* pool.preconnect(server.url, 5)
          assert.include(first, { requested: 3, opened: 3 })
          // three wait already: the pool of 3 could take none more
          assert.include(yield* pool.preconnect(server.url, 2), { requested: 0, opened: 0 })
          yield* waitUntil(() => server.counters.open === 3, "3 connections are open")
        }),
        { connectionsPerOrigin: 3 }
      )
      yield* waitUntil(() => server.counters.open === 0, "the scope closed them")
      assert.strictEqual(server.counters.connections, 3)
    }).pipe(Effect.scoped))

  it.live("a connection not taken within keepAliveTimeout is closed", () =>
    run(
      Effect.gen(function*() {
        const server = yield* testServer({})
        const pool = yield* HttpPool.HttpPool
        assert.include(yield* pool.preconnect(server.url, 2), { opened: 2 })
        yield* waitUntil(() => server.counters.connections === 2, "2 connections are accepted")
        yield* waitUntil(() => server.counters.open === 0, "both idle connections are closed")
        assert.strictEqual((yield* pool.stats)[server.url]?.preconnected ?? 0, 0)
      }),
      { keepAliveTimeout: "50 millis" }
    ))

  it.live("an origin that cannot be reached is a warning naming it, and the client is still built", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}`
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logs.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
      })
      const name = uniqueName("unreachable")
      yield* run(Effect.gen(function*() {
        const provider = yield* Provider.make({ name, bulkhead: { permits: 2 } })
        yield* ProviderHttpClient.make(provider, { baseUrl: url, preconnect: true })
        const pool = yield* HttpPool.HttpPool
        const direct = yield* pool.preconnect(url, 1)
        assert.include(direct, { requested: 1, opened: 0 })
        assert.match(direct.failure ?? "", /ECONNREFUSED/)
      })).pipe(Effect.provide(Logger.layer([logger])))
      assert.strictEqual(logs.length, 1)
      assert.match(
        logs[0],
        new RegExp(`^provider "${name}": opened 0 of 2 connections to ${url} ahead of its calls \\(.*ECONNREFUSED`)
      )
    }))

  it.live("an interrupted preconnect closes the connections that open after it, and leaks none", () =>
    run(
      Effect.gen(function*() {
        const server = yield* testServer({})
        const pool = yield* HttpPool.HttpPool
        // started at once, it runs until its attempts wait for their connects: no I/O has run yet,
        // so none has connected when they are interrupted (a yield would let the loop connect them)
        const fiber = yield* Effect.forkChild(pool.preconnect(server.url, 4), { startImmediately: true })
        yield* Fiber.interrupt(fiber)
        yield* waitUntil(() => server.counters.connections === 4, "the server accepted the 4 connections")
        yield* waitUntil(() => server.counters.open === 0, "every one of them is closed again")
        assert.strictEqual((yield* pool.stats)[server.url]?.preconnected ?? 0, 0)
        // closed by the interruption, not by the idle timeout
      }),
      { keepAliveTimeout: "1 minute" }
    ))

  it.live("a host whose every address refuses says why, whatever the error's own message", () =>
    run(Effect.gen(function*() {
      const port = yield* closedPort
      const pool = yield* HttpPool.HttpPool
      // `localhost` may resolve to both ::1 and 127.0.0.1: then Node fails with an AggregateError
      const { failure, opened } = yield* pool.preconnect(`http://localhost:${port}`, 1)
      assert.strictEqual(opened, 0)
      assert.match(failure ?? "", /ECONNREFUSED/)
    })))

  it.live("a count that is not a positive integer is a defect", () =>
    run(Effect.gen(function*() {
      const pool = yield* HttpPool.HttpPool
      for (const connections of [0, -1, 1.5]) {
        const exit = yield* Effect.exit(pool.preconnect("http://127.0.0.1:9", connections))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }
    })))
})
