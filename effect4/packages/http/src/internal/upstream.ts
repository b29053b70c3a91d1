/**
 * What an error status does, for both clients: counted, a 429 (or a 503 with `Retry-After`) pauses
 * the provider's limiter for every caller at its headers, the body is drained or aborted, and the
 * attempt fails with `UpstreamRateLimited` or `UpstreamStatus` for the provider to retry. The
 * middleware hands the response itself back once the provider is done with it.
 *
 * @internal
 */
import { type RetryAfterBounds, retryAfterMillis } from "@sluice/core/RetryAfter"
import type * as Provider from "@sluice/provider/Provider"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Metric from "effect/Metric"
import { BufferedResponse } from "./bufferedResponse.js"
import * as errors from "./errors.js"
import type { DrainedBody } from "./responseBody.js"

/** @internal */
export const upstreamStatusTotal = Metric.counter("sluice_http_upstream_status_total", {
  description: "Responses a provider's upstream answered with an error status (429s included), by provider and status",
  incremental: true
})

/**
 * The response of an error status, on the error its attempt failed with, for the middleware to
 * answer with: a property rather than a map by identity, since an error that crosses a span may be
 * seen through an object that inherits from it.
 */
const ResponseKey: unique symbol = Symbol.for("@sluice/http/Upstream/response")

/** @internal */
export type StatusError = errors.UpstreamRateLimited | errors.UpstreamStatus

/** @internal */
export const isHandedBack = (error: unknown): error is errors.UpstreamRateLimited | errors.UpstreamStatus =>
  (error instanceof errors.UpstreamRateLimited || error instanceof errors.UpstreamStatus) && ResponseKey in error

/** @internal */
export const handedBack = (error: StatusError): HttpClientResponse.HttpClientResponse =>
  (error as unknown as { readonly [ResponseKey]: HttpClientResponse.HttpClientResponse })[ResponseKey]

/** Statuses whose response has no body (the web `Response` refuses one). */
const nullBody = new Set([101, 103, 204, 205, 304])

/**
 * The upstream's status and headers with `body`, for the caller to read as it likes.
 *
 * @internal
 */
export const handOn = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  body: Uint8Array | ReadableStream<Uint8Array>
): HttpClientResponse.HttpClientResponse =>
  body instanceof Uint8Array
    ? new BufferedResponse(request, response.status, response.headers, body)
    : HttpClientResponse.fromWeb(
      request,
      new Response(nullBody.has(response.status) ? null : body, { status: response.status, headers: response.headers })
    )

/** @internal */
export const failStatus = (context: {
  readonly provider: Provider.Provider<unknown>
  readonly retryAfter: RetryAfterBounds
  readonly drain: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<DrainedBody>
  readonly urlOf: (request: HttpClientRequest.HttpClientRequest) => string
  /** Keep the response (what was read of its body) for the middleware to hand back. */
  readonly keep?: boolean | undefined
}) => {
  const { provider } = context
  const name = provider.name
  const kept = <E extends object>(
    error: E,
    request: HttpClientRequest.HttpClientRequest,
    response: HttpClientResponse.HttpClientResponse,
    drained: DrainedBody
  ): E => {
    if (context.keep === true) {
      Object.defineProperty(error, ResponseKey, { value: handOn(request, response, drained.bytes), enumerable: false })
    }
    return error
  }
  return (
    request: HttpClientRequest.HttpClientRequest,
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<never, errors.UpstreamRateLimited | errors.UpstreamStatus> =>
    Effect.gen(function*() {
      const status = response.status
      yield* Metric.update(Metric.withAttributes(upstreamStatusTotal, { name, status: String(status) }), 1)
      const header = response.headers["retry-after"]
      if (status === 429 || (status === 503 && header !== undefined)) {
        const retryAfter = Duration.millis(retryAfterMillis(header, yield* Clock.currentTimeMillis, context.retryAfter))
        // every caller of this provider, in every process sharing its store, honours the pause;
        // set at the headers, before the drain: a body that never ends must not delay it
        if (provider.rateLimiter !== undefined) {
          yield* provider.rateLimiter.pauseFor(retryAfter).pipe(
            Effect.catch((error) => Effect.logWarning(`could not pause provider "${name}": ${error.message}`))
          )
        }
        const drained = yield* context.drain(response)
        return yield* Effect.fail(kept(
          new errors.UpstreamRateLimited({
            provider: name,
            status,
            url: context.urlOf(request),
            retryAfter,
            retryAfterHeader: header
          }),
          request,
          response,
          drained
        ))
      }
      const drained = yield* context.drain(response)
      return yield* Effect.fail(kept(
        new errors.UpstreamStatus({ provider: name, status, url: context.urlOf(request), body: drained.excerpt }),
        request,
        response,
        drained
      ))
    })
}
