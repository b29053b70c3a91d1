import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as Provider from "@sluice/provider/Provider"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as HttpPool from "../HttpPool.js"
import type * as Api from "../Middleware.js"
import * as Calls from "./calls.js"
import { tag as HttpPoolTag } from "./httpPool.js"
import * as Upstream from "./upstream.js"

const handOn = Upstream.handOn

const jsonStreamFlag = [Buffer.from(`"stream":true`), Buffer.from(`"stream": true`)]

/** The default of `Options.streamed`: an `Accept` naming server-sent events, or a JSON body with `"stream": true`. */
export const asksForStream = (request: HttpClientRequest.HttpClientRequest): boolean => {
  if (request.headers["accept"]?.includes("text/event-stream") === true) return true
  const body = request.body
  if (body._tag !== "Uint8Array") return false
  const bytes = Buffer.from(body.body.buffer, body.body.byteOffset, body.body.byteLength)
  return jsonStreamFlag.some((flag) => bytes.includes(flag))
}

export { liftRefusals, refusalOf } from "./refusals.js"

/**
 * The client of `provider` over `client`: every request a call of the provider, its body read (or
 * streamed) inside the permit. `asRequestError` puts a refusal in the `cause` of an `HttpClientError`'s `TransportError`,
 * for code that requires `HttpClient.HttpClient`.
 *
 * @internal
 */
export const make = <Err, E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  provider: Provider.Provider<Err>,
  options: Api.Options,
  asRequestError: boolean
): Effect.Effect<
  HttpClient.HttpClient.With<E | Err | Api.BodyError | HttpClientError.HttpClientError, R>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> =>
  Effect.gen(function*() {
    const calls = yield* Calls.make(client, provider as Provider.Provider<unknown>, options, true)
    const context = yield* Effect.context<never>()
    const streamedOf = options.streamed ?? asksForStream

    /** The response handed on at its headers, its body read from the call as the reader pulls it. */
    const streamed = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.map(calls.streamed(request), ({ body, response }) =>
        body === undefined ? response : handOn(request, response, Stream.toReadableStreamWith(body, context)))

    const toRequestError = (request: HttpClientRequest.HttpClientRequest) => (error: unknown) =>
      HttpClientError.isHttpClientError(error) ? error : new HttpClientError.HttpClientError({
        reason: new HttpClientError.TransportError({
          request,
          cause: error,
          description: Predicate.hasProperty(error, "message") ? String(error.message) : String(error)
        })
      })

    const execute = (
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown, R> => {
      const resolved = calls.resolve(request)
      if (Result.isFailure(resolved)) {
        return Effect.fail(resolved.failure)
      }
      const call = streamedOf(resolved.success) ? streamed(resolved.success) : calls.buffered(resolved.success)
      return asRequestError ? Effect.mapError(call, toRequestError(request)) : call
    }

    return HttpClient.makeWith(
      (request) =>
        Effect.flatMap(request, execute),
      Effect.succeed
    ) as HttpClient.HttpClient.With<E | Err | Api.BodyError | HttpClientError.HttpClientError, R>
  })

/** The undici client of the pool's dispatcher. */
const undiciOf = (pool: HttpPool.Service) =>
  Effect.provideService(NodeHttpClient.makeUndici, NodeHttpClient.Dispatcher, pool.dispatcher)

/** @internal */
export const makeTyped = <Err>(
  provider: Provider.Provider<Err>,
  options: Api.Options
): Effect.Effect<
  HttpClient.HttpClient.With<HttpClientError.HttpClientError | Err | Api.BodyError>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> =>
  Effect.flatMap(
    HttpPoolTag,
    (pool) => Effect.flatMap(undiciOf(pool), (client) => make(client, provider, options, false))
  )

/** @internal */
export const layer = <P>(
  providerTag: Context.Key<P, Provider.Provider>,
  options: Api.Options
): Layer.Layer<HttpClient.HttpClient, HttpPool.PoolTooSmall, P | HttpPool.HttpPool> =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.flatMap(
      Effect.all([providerTag, HttpPoolTag]),
      ([provider, pool]) =>
        Effect.flatMap(undiciOf(pool), (client) => make(client, provider, options, true)) as Effect.Effect<
          HttpClient.HttpClient,
          HttpPool.PoolTooSmall,
          HttpPool.HttpPool | Scope.Scope
        >
    )
  )

/** @internal */
export const wrap = <Err, E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  provider: Provider.Provider<Err>,
  options: Api.Options
) => make(client, provider, options, false)
