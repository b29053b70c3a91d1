/**
 * Where a call's fibers run (`Options.scheduler`): from the event loop's check phase by default,
 * so that the work a response resumes waits behind the writes undici queued there; on the
 * caller's scheduler with `"caller"`; and back on the caller's once the call returns.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, FiberRef, Scheduler, Schema, Stream } from "effect"
import * as net from "node:net"
import { checkPhase } from "../src/internal/checkPhase.js"
import { run, uniqueName } from "./utils/run.js"
import { json, testServer } from "./utils/server.js"

type Method = "execute" | "text" | "json" | "stream"

/**
 * The scheduler each method's call sends its request on (read by a tap on the underlying client,
 * inside the call), and the caller's before and after the calls.
 */
const schedulers = (options: Partial<ProviderHttpClient.Options>) =>
  run(Effect.gen(function*() {
    const server = yield* testServer({ "/ok": json({ ok: true }) })
    const seen: Array<Scheduler.Scheduler> = []
    const tapped = Effect.map(
      HttpClient.HttpClient,
      HttpClient.tapRequest(() => Effect.map(FiberRef.get(FiberRef.currentScheduler), (s) => seen.push(s)))
    )
    const provider = yield* Provider.make({ name: uniqueName("scheduler"), bulkhead: { permits: 1 } })
    const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, ...options }).pipe(
      Effect.provideServiceEffect(HttpClient.HttpClient, tapped)
    )
    const before = yield* FiberRef.get(FiberRef.currentScheduler)
    const request = HttpClientRequest.get("/ok")
    const calls: Record<Method, Effect.Effect<unknown, unknown>> = {
      execute: client.execute(request, () => Effect.void),
      text: client.text(request),
      json: client.json(request, Schema.Unknown),
      stream: Stream.runDrain(client.stream(request))
    }
    const inside: Partial<Record<Method, Scheduler.Scheduler | undefined>> = {}
    for (const method of Object.keys(calls) as Array<Method>) {
      yield* calls[method]
      inside[method] = seen.pop()
    }
    const after = yield* FiberRef.get(FiberRef.currentScheduler)
    return { before, inside, after }
  }))

/**
 * What the check-phase scheduler is for, on a real loopback socket: a fiber that an I/O callback
 * wakes runs after an immediate the callback queued first (undici's deferred write), not in the
 * callback's microtasks as under Effect's default scheduler.
 */
const orderInIoCallback = (scheduler: Scheduler.Scheduler) =>
  Effect.gen(function*() {
    const order: Array<string> = []
    const server = net.createServer((socket) => {
      socket.on("error", () => {})
      socket.end("response")
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.sync(() => server.close())
    )
    const address = server.address()
    assert(address !== null && typeof address === "object")
    yield* Effect.async<void>((resume) => {
      const socket = net.connect(address.port, "127.0.0.1")
      socket.once("data", () => {
        setImmediate(() => order.push("write queued before the wake-up"))
        resume(Effect.sync(() => order.push("work the response resumed")))
        socket.destroy()
      })
    }).pipe(Effect.withScheduler(scheduler))
    // both have run once a later immediate has
    yield* Effect.async<void>((resume) => {
      setImmediate(() => setImmediate(() => resume(Effect.void)))
    })
    return order
  }).pipe(Effect.scoped)

/** The scheduler the middleware sends a request on, by default, and the caller's. */
const middlewareScheduler = run(Effect.gen(function*() {
  const server = yield* testServer({ "/ok": json({ ok: true }) })
  const seen: Array<Scheduler.Scheduler> = []
  const tapped = HttpClient.tapRequest(
    yield* HttpClient.HttpClient,
    () => Effect.map(FiberRef.get(FiberRef.currentScheduler), (s) => seen.push(s))
  )
  const provider = yield* Provider.make({ name: uniqueName("mw-scheduler"), bulkhead: { permits: 1 } })
  const client = yield* Middleware.wrap(tapped, provider, { baseUrl: server.url })
  yield* Effect.flatMap(client.get("/ok"), (response) => response.text)
  return { caller: yield* FiberRef.get(FiberRef.currentScheduler), inside: seen.pop() }
}))

describe("Options.scheduler", () => {
  it.live("by default every method's call runs on the check-phase scheduler, and the caller's is back after it", () =>
    Effect.gen(function*() {
      const { after, before, inside } = yield* schedulers({})
      assert.deepStrictEqual(inside, { execute: checkPhase, text: checkPhase, json: checkPhase, stream: checkPhase })
      assert.strictEqual(after, before)
    }))

  it.live("the middleware's requests run on the check-phase scheduler by default too", () =>
    Effect.gen(function*() {
      const { inside } = yield* middlewareScheduler
      assert.strictEqual(inside, checkPhase)
    }))

  it.effect("under the TestClock, calls stay on the caller's scheduler, whatever the option says", () =>
    Effect.gen(function*() {
      // the TestClock moves once fibers look suspended, as one waiting for an immediate does
      const { after, before, inside } = yield* schedulers({})
      assert.deepStrictEqual(inside, { execute: before, text: before, json: before, stream: before })
      assert.strictEqual(after, before)
      const middleware = yield* middlewareScheduler
      assert.strictEqual(middleware.inside, middleware.caller)
    }))

  it.live(`"caller" leaves every call on the caller's scheduler, one it set included`, () =>
    Effect.gen(function*() {
      const { after, before, inside } = yield* schedulers({ scheduler: "caller" })
      assert.deepStrictEqual(inside, { execute: before, text: before, json: before, stream: before })
      assert.strictEqual(after, before)
      const own = Scheduler.makeBatched((runBatch) => setTimeout(runBatch, 0))
      const nested = yield* Effect.withScheduler(schedulers({ scheduler: "caller" }), own)
      assert.deepStrictEqual(nested.inside, { execute: own, text: own, json: own, stream: own })
    }))

  it.live("the check phase runs the work I/O resumes after the immediates queued before it", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* orderInIoCallback(checkPhase), [
        "write queued before the wake-up",
        "work the response resumed"
      ])
      // under Effect's default scheduler, the order the check phase exists to change
      assert.deepStrictEqual(yield* orderInIoCallback(Scheduler.defaultScheduler), [
        "work the response resumed",
        "write queued before the wake-up"
      ])
    }))
})
