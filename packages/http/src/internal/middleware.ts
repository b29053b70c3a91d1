import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Provider from "@sluice/provider/Provider"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
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
 * streamed) inside the permit. `asRequestError` puts a refusal in the `cause` of a `RequestError`,
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
  HttpClient.HttpClient.With<E | Err | Api.BodyError | HttpClientError.ResponseError, R>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> =>
  Effect.gen(function*() {
    const calls = yield* Calls.make(client, provider as Provider.Provider<unknown>, options, true)
    const runtime = yield* Effect.runtime<never>()
    const streamedOf = options.streamed ?? asksForStream

    /** The response handed on at its headers, its body read from the call as the reader pulls it. */
    const streamed = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.map(calls.streamed(request), ({ body, response }) =>
        body === undefined ? response : handOn(request, response, Stream.toReadableStreamRuntime(body, runtime)))

    const toRequestError = (request: HttpClientRequest.HttpClientRequest) => (error: unknown) =>
      HttpClientError.isHttpClientError(error) ? error : new HttpClientError.RequestError({
        request,
        reason: "Transport",
        cause: error,
        description: Predicate.hasProperty(error, "message") ? String(error.message) : String(error)
      })

    const execute = (
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown, R> => {
      const resolved = calls.resolve(request)
      if (Either.isLeft(resolved)) {
        return Effect.fail(resolved.left)
      }
      const call = streamedOf(resolved.right) ? streamed(resolved.right) : calls.buffered(resolved.right)
      return asRequestError ? Effect.mapError(call, toRequestError(request)) : call
    }

    return HttpClient.makeWith(
      (request) =>
        Effect.flatMap(request, execute),
      Effect.succeed
    ) as HttpClient.HttpClient.With<E | Err | Api.BodyError | HttpClientError.ResponseError, R>
  })

/** @internal */
export const makeTyped = <Err>(
  provider: Provider.Provider<Err>,
  options: Api.Options
): Effect.Effect<
  HttpClient.HttpClient.With<HttpClientError.HttpClientError | Err | Api.BodyError>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> => Effect.flatMap(HttpPoolTag, (pool) => make(NodeHttpClient.makeUndici(pool.dispatcher), provider, options, false))

/** @internal */
export const layer = <P>(
  providerTag: Context.Tag<P, Provider.Provider>,
  options: Api.Options
): Layer.Layer<HttpClient.HttpClient, HttpPool.PoolTooSmall, P | HttpPool.HttpPool> =>
  Layer.scoped(
    HttpClient.HttpClient,
    Effect.flatMap(
      Effect.all([providerTag, HttpPoolTag]),
      ([provider, pool]) =>
        make(NodeHttpClient.makeUndici(pool.dispatcher), provider, options, true) as Effect.Effect<
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
