/**
 * What the HTTP suites share: the loopback server (bench/src/lib/httpServer.mjs, a process of its
 * own), a round of requests with IN_FLIGHT in flight, the plain @effect/platform client and the
 * middleware's `HttpClient` on an undici pool of IN_FLIGHT connections.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { HttpPool, Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Layer, ManagedRuntime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

export const IN_FLIGHT = 64

/** A round: runs its requests and answers requests per second. */
export type Round = () => Promise<number>

/**
 * Starts the loopback server from bench/src/lib (`srcDir` is bench/src: a bundle's own location
 * says nothing of the sources'); its URL, and the process to end by closing its stdin.
 */
export const startServer = async (srcDir: string): Promise<{ readonly url: string; readonly server: ChildProcess }> => {
  const server = spawn(process.execPath, [join(srcDir, "lib", "httpServer.mjs")], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    server.stdout.once("data", (data: Buffer) => resolve(data.toString().trim()))
    server.once("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })
  return { url, server }
}

/** Runs `one` `requests` times, IN_FLIGHT at a time; requests per second. */
export const effectPerSecond = (requests: number, one: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* Effect.forEach(Array.from({ length: requests }), () => one, { concurrency: IN_FLIGHT, discard: true })
    return requests / ((performance.now() - start) / 1000)
  })

/** Builds a runtime for `layer`, returns a round that runs `effect` in it. */
export const inRuntime = async <R>(
  layer: Layer.Layer<R, unknown>,
  round: Effect.Effect<number, unknown, R>
): Promise<Round> => {
  const runtime = ManagedRuntime.make(layer)
  await runtime.runPromise(Effect.void)
  return () => runtime.runPromise(round)
}

/** The plain @effect/platform client on an undici agent of IN_FLIGHT connections. */
export const platformLayer = (spans: boolean) => {
  const dispatcher = Layer.scoped(
    NodeHttpClient.Dispatcher,
    Effect.acquireRelease(
      Effect.sync(() => new Undici.Agent({ connections: IN_FLIGHT, pipelining: 1 })),
      (agent) => Effect.promise(() => agent.destroy())
    )
  )
  const client = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(Layer.provide(dispatcher))
  return spans ? client : Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, HttpClient.withTracerDisabledWhen(() => true))
  ).pipe(Layer.provide(client))
}

/** One request of a plain `HttpClient`, its body read. */
export const plainRequest = (client: HttpClient.HttpClient, url: string, latency: number) =>
  Effect.flatMap(client.execute(HttpClientRequest.get(`${url}/r?delay=${latency}`)), (r) => r.text)

/** The benchmarks' provider: a bulkhead of IN_FLIGHT, no limiter. */
export class Bench extends Provider.Tag("bench")<Bench>() {}

/** The middleware's `HttpClient` service (`Middleware.layer`) over the pool: the plain client's code, bounded. */
export const middlewareRound = (
  url: string,
  latency: number,
  requests: number,
  scheduler: Middleware.Options["scheduler"] = "check-phase"
): Promise<Round> =>
  inRuntime(
    Middleware.layer(Bench, { baseUrl: url, scheduler }).pipe(
      Layer.provide(Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
      Layer.provide(HttpPool.layer())
    ),
    Effect.flatMap(HttpClient.HttpClient, (client) => effectPerSecond(requests, plainRequest(client, url, latency)))
  )
