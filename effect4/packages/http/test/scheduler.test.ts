/**
 * Where a call's fibers run (`Options.scheduler`): on the check-phase scheduler by default, on the
 * caller's with `"caller"`, and back on the caller's once the call returns. On Effect 4.1 a
 * Scheduler decides where yields and forks run, not where an I/O callback resumes a fiber: the
 * last test pins that the check phase cannot reorder that work there, as it does on the 0.x line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Scheduler, Schema, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import * as net from "node:net"
import { checkPhase } from "../src/internal/checkPhase.js"
import { run, uniqueName } from "./utils/run.js"
import { json, testServer } from "./utils/server.js"

type Method = "execute" | "text" | "json" | "stream"

/** The scheduler the current fiber runs on: a `Context.Reference` on Effect 4. */
const currentScheduler = Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(Scheduler.Scheduler)))

/** Runs `effect` on `scheduler`. */
const withScheduler = <A, E, R>(effect: Effect.Effect<A, E, R>, scheduler: Scheduler.Scheduler) =>
  Effect.provideService(effect, Scheduler.Scheduler, scheduler)

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
      HttpClient.tapRequest(() => Effect.map(currentScheduler, (s) => seen.push(s)))
    )
    const provider = yield* Provider.make({ name: uniqueName("scheduler"), bulkhead: { permits: 1 } })
    const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, ...options }).pipe(
      Effect.provideServiceEffect(HttpClient.HttpClient, tapped)
    )
    const before = yield* currentScheduler
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
    const after = yield* currentScheduler
    return { before, inside, after }
  }))

/**
 * The order, on a real loopback socket, of an immediate an I/O callback queues (undici's deferred
 * write) and the work of the fiber the same callback resumes, with `scheduler` provided.
 */
const orderInIoCallback = (scheduler: Scheduler.Scheduler) =>
  Effect.gen(function*() {
    const order: Array<string> = []
    const server = net.createServer((socket) => {
      socket.on("error", () => {})
      socket.end("response")
    })
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.sync(() => server.close())
    )
    const address = server.address()
    assert(address !== null && typeof address === "object")
    yield* Effect.callback<void>((resume) => {
      const socket = net.connect(address.port, "127.0.0.1")
      socket.once("data", () => {
        setImmediate(() => order.push("write queued before the wake-up"))
        resume(Effect.sync(() => order.push("work the response resumed")))
        socket.destroy()
      })
    }).pipe((effect) => withScheduler(effect, scheduler))
    // both have run once a later immediate has
    yield* Effect.callback<void>((resume) => {
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
    () => Effect.map(currentScheduler, (s) => seen.push(s))
  )
  const provider = yield* Provider.make({ name: uniqueName("mw-scheduler"), bulkhead: { permits: 1 } })
  const client = yield* Middleware.wrap(tapped, provider, { baseUrl: server.url })
  yield* Effect.flatMap(client.get("/ok"), (response) => response.text)
  return { caller: yield* currentScheduler, inside: seen.pop() }
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
      const own = new Scheduler.MixedScheduler("async", (f) => {
        const timer = setTimeout(f, 0)
        return () => clearTimeout(timer)
      })
      const nested = yield* withScheduler(schedulers({ scheduler: "caller" }), own)
      assert.deepStrictEqual(nested.inside, { execute: own, text: own, json: own, stream: own })
    }))

  it.live("on Effect 4.1 an I/O resume runs the fiber at once, under the check phase as under the default", () =>
    Effect.gen(function*() {
      // the 0.x line's check phase reorders these two; on 4.1 a callback's resume evaluates the
      // fiber in the I/O callback whatever the Scheduler, so no Scheduler can
      const resumedFirst = ["work the response resumed", "write queued before the wake-up"]
      assert.deepStrictEqual(yield* orderInIoCallback(checkPhase), resumedFirst)
      assert.deepStrictEqual(yield* orderInIoCallback(new Scheduler.MixedScheduler()), resumedFirst)
    }))
})
