/**
 * Lanes through the middleware, against a real server on 127.0.0.1: a request sent inside
 * `Provider.withLane` waits in that lane of the provider's bulkhead, as a library that takes an
 * `HttpClient` would send it, without knowing of lanes.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Fiber } from "effect"
import type * as http from "node:http"
import { run, uniqueName, waitUntil, waitUntilEffect } from "./utils/run.js"
import { testServer } from "./utils/server.js"

/** The order requests reach the server in; each held until `open`, then all answered at once. */
const gated = () => {
  const arrived: Array<string> = []
  const held: Array<http.ServerResponse> = []
  let opened = false
  const answer = (res: http.ServerResponse) => res.end("ok")
  return {
    arrived,
    open: () => {
      opened = true
      for (const res of held.splice(0)) answer(res)
    },
    handler: (req: http.IncomingMessage, res: http.ServerResponse) => {
      arrived.push(new URL(req.url ?? "/", "http://x").searchParams.get("id") ?? "?")
      if (opened) answer(res)
      else held.push(res)
    }
  }
}

describe("Middleware: lanes", () => {
  it.live("a request inside withLane passes the batch's queue; without it, it queues behind", () =>
    run(Effect.gen(function*() {
      const order = (interactive: boolean) =>
        Effect.scoped(Effect.gen(function*() {
          const gate = gated()
          const server = yield* testServer({ "/work": gate.handler })
          const provider = yield* Provider.make({
            name: uniqueName("mw-lanes"),
            bulkhead: {
              permits: 1,
              lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 minute" } })
            }
          })
          const client = yield* Middleware.make(provider, { baseUrl: server.url })
          const send = (id: string) => Effect.flatMap(client.get(`/work?id=${id}`), (response) => response.text)
          const batch = yield* Effect.forEach(["b0", "b1", "b2", "b3", "b4"], (id) => Effect.forkChild(send(id)))
          yield* waitUntil(() => gate.arrived.length === 1, "the first batch request arrived")
          yield* waitUntilEffect(
            Effect.map(provider.bulkhead.stats, (stats) => stats.waiting === 4),
            "four batch requests queued"
          )
          const chat = yield* Effect.forkChild(
            interactive ? send("i").pipe(Provider.withLane("interactive")) : send("i")
          )
          yield* waitUntilEffect(Effect.map(provider.bulkhead.stats, (stats) => stats.waiting === 5), "five queued")
          gate.open()
          yield* Fiber.join(chat)
          yield* Effect.forEach(batch, Fiber.join)
          const lanes = (yield* provider.stats).lanes ?? []
          return { arrived: gate.arrived, attempts: lanes.map((lane) => [lane.lane, lane.attempts]) }
        }))
      const withLane = yield* order(true)
      assert.deepStrictEqual(withLane.arrived, ["b0", "i", "b1", "b2", "b3", "b4"])
      assert.deepStrictEqual(withLane.attempts, [["interactive", 1], ["batch", 5]])
      const without = yield* order(false)
      assert.deepStrictEqual(without.arrived, ["b0", "b1", "b2", "b3", "b4", "i"])
      assert.deepStrictEqual(without.attempts, [["interactive", 0], ["batch", 6]])
    })))
})
