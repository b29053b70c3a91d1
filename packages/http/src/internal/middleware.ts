import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as HttpPool from "../HttpPool.js"
import type * as Api from "../Middleware.js"
import { DEFAULT_USER_AGENT } from "./clientSettings.js"
import * as errors from "./errors.js"
import { tag as HttpPoolTag } from "./httpPool.js"
import type * as Metering from "./metering.js"
import { setup } from "./setup.js"
import * as Upstream from "./upstream.js"

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"])
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

/** What `usage` is given of a body read whole: parsed JSON, text, or the bytes. */
const usageBody = (response: HttpClientResponse.HttpClientResponse, bytes: Uint8Array): unknown => {
  const type = response.headers["content-type"] ?? ""
  if (!type.includes("json") && !type.startsWith("text/")) return bytes
  const text = new TextDecoder().decode(bytes)
  if (!type.includes("json")) return text
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** True for a sluice refusal: a provider's, or the body's bounds. */
export const isRefusal = (u: unknown): u is Api.Refusal =>
  Provider.isProviderError(u) || u instanceof errors.BodyTooLarge || u instanceof errors.StreamIdleTimeout

/** The refusal behind `error`, following `cause` a few levels (an SDK's error, its `RequestError`). */
export const refusalOf = (error: unknown): Option.Option<Api.Refusal> => {
  let current = error
  for (let depth = 0; depth < 6; depth++) {
    if (isRefusal(current)) return Option.some(current)
    if (!Predicate.hasProperty(current, "cause")) return Option.none()
    current = current.cause
  }
  return Option.none()
}

/** @internal */
export const liftRefusals = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | Api.Refusal, R> =>
  Effect.catchAll(self, (error): Effect.Effect<never, E | Api.Refusal> => {
    const refusal = refusalOf(error)
    return Option.isSome(refusal) ? Effect.fail(refusal.value) : Effect.fail(error)
  })

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
    const name = provider.name
    const urlOf = (request: HttpClientRequest.HttpClientRequest) => request.url
    const { body, call, failStatus, metering, scheduled, sending, settings } = yield* setup(
      provider as Provider.Provider<unknown>,
      options,
      urlOf,
      true
    )
    const origin = settings.origin
    const buildScope = yield* Effect.scope
    const runtime = yield* Effect.runtime<never>()

    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const originSlash = `${origin}/`
    const defaults = Object.entries({ "user-agent": options.userAgent ?? DEFAULT_USER_AGENT, ...options.headers })
      .map(([key, value]) => [key.toLowerCase(), value] as const)
    const scoped = HttpClient.withScope(client)
    const learn = metering.learn
    const streamedOf = options.streamed ?? asksForStream
    const idempotentOf = options.idempotent

    /** The request with the provider's base URL and default headers, or why it is not the provider's. */
    const resolve = (
      request: HttpClientRequest.HttpClientRequest
    ): Either.Either<HttpClientRequest.HttpClientRequest, HttpClientError.RequestError> => {
      let resolved = request
      if (request.url.startsWith(originSlash)) {
        // the provider's own origin, as SDKs send it: nothing to parse
      } else if (!/^[a-z][a-z0-9+.-]*:/i.test(request.url)) {
        resolved = HttpClientRequest.prependUrl(request, baseUrl)
      } else {
        let other: string | undefined
        try {
          other = new URL(request.url).origin
        } catch {
          other = undefined // the client below refuses it as an InvalidUrl
        }
        if (other !== undefined && other !== origin) {
          return Either.left(
            new HttpClientError.RequestError({
              request,
              reason: "InvalidUrl",
              description: `provider "${name}" reaches ${origin} only, not ${other}`
            })
          )
        }
      }
      const missing = defaults.filter(([key]) => resolved.headers[key] === undefined)
      return Either.right(
        missing.length === 0 ? resolved : HttpClientRequest.setHeaders(resolved, Object.fromEntries(missing))
      )
    }

    const callOptions = (request: HttpClientRequest.HttpClientRequest): Provider.CallOptions => {
      const idempotent = idempotentOf === undefined
        ? idempotentMethods.has(request.method) || request.headers["idempotency-key"] !== undefined
        : typeof idempotentOf === "boolean"
        ? idempotentOf
        : idempotentOf(request)
      return idempotent ? {} : { retry: false }
    }

    const learned = (response: HttpClientResponse.HttpClientResponse) =>
      learn === undefined ? Effect.void : learn(response)

    /** One attempt of a buffered request: the exchange and the whole body, handed on from memory. */
    const attempt = (
      request: HttpClientRequest.HttpClientRequest,
      slot: Metering.Slot
    ): Effect.Effect<
      HttpClientResponse.HttpClientResponse,
      E | Upstream.StatusError | Api.BodyError | HttpClientError.ResponseError,
      R
    > =>
      Effect.flatMap(sending(client.execute(request)), (
        response
      ): Effect.Effect<
        HttpClientResponse.HttpClientResponse,
        E | Upstream.StatusError | Api.BodyError | HttpClientError.ResponseError,
        R
      > => {
        if (response.status < 200 || response.status >= 300) {
          return Effect.zipRight(learned(response), failStatus(request, response))
        }
        const read = Effect.flatMap(body.readBytes(request, response), (bytes) =>
          metering.metered
            ? Effect.as(metering.report(slot, response, usageBody(response, bytes)), handOn(request, response, bytes))
            : Effect.succeed(handOn(request, response, bytes)))
        return learn === undefined ? read : Effect.zipRight(learn(response), read)
      })

    /** An error status, answered after the provider's last attempt: the response as the upstream sent it. */
    const handedBack = <A, E1, R1>(call: Effect.Effect<A, E1, R1>) =>
      Effect.catchIf(call, Upstream.isHandedBack, (error) => Effect.succeed(Upstream.handedBack(error)))

    const buffered = (request: HttpClientRequest.HttpClientRequest) =>
      handedBack(call(request, callOptions(request), (slot) => attempt(request, slot)))

    /**
     * A streamed request: the call runs on a fiber of its own, and the response is handed on at its
     * headers with a body fed from a queue by the attempt, which holds its permit until the body
     * ends, fails, or its reader stops or stays idle.
     */
    const streamed = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.gen(function*() {
        const head = yield* Deferred.make<HttpClientResponse.HttpClientResponse, unknown>()
        const queue = yield* Queue.bounded<Uint8Array>(16)
        // how the call ended, once it has: set after the pump's last offer, never blocking
        const done = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
        const slot: Metering.Slot = { usage: undefined }
        let handedOver = false
        let broken: Option.Option<unknown> = Option.none()
        const kept = { chunks: [] as Array<Uint8Array>, size: 0 }
        const idle = (received: number) =>
          new errors.StreamIdleTimeout({
            provider: name,
            url: request.url,
            idleTimeout: settings.idleTimeout,
            received
          })
        const pump = (
          response: HttpClientResponse.HttpClientResponse
        ): Effect.Effect<void, HttpClientError.ResponseError | errors.StreamIdleTimeout> => {
          let received = 0
          // what is left in the queue once the call has ended, then the end or the failure
          const afterEnd = Effect.flatMap(Deferred.await(done), (exit) =>
            Effect.flatMap(Queue.poll(queue), (left): Effect.Effect<Uint8Array, Option.Option<unknown>> => {
              if (Option.isSome(left)) return Effect.succeed(left.value)
              return Exit.isSuccess(exit)
                ? Effect.fail(Option.none())
                : Effect.failCause(Cause.map(exit.cause, Option.some))
            }))
          const next = Effect.flatMap(
            Queue.poll(queue),
            (polled) =>
              Option.isSome(polled) ? Effect.succeed(polled.value) : Effect.raceFirst(Queue.take(queue), afterEnd)
          )
          const reader = Stream.repeatEffectOption(next).pipe(Stream.ensuring(Queue.shutdown(queue)))
          handedOver = true
          return Deferred.succeed(head, handOn(request, response, Stream.toReadableStreamRuntime(reader, runtime)))
            .pipe(
              Effect.zipRight(response.stream.pipe(
                Stream.timeoutFail(() =>
                  idle(received), settings.idleTimeout),
                Stream.runForEach((chunk) => {
                  received += chunk.length
                  if (metering.metered && kept.size + chunk.length <= settings.maxBodySize) {
                    kept.chunks.push(chunk)
                    kept.size += chunk.length
                  }
                  // a reader that stops reading holds the permit for the idle timeout at most
                  return Effect.timeoutFail(Queue.offer(queue, chunk), {
                    duration: settings.idleTimeout,
                    onTimeout: () => idle(received)
                  })
                })
              )),
              Effect.tapError((error) => Effect.sync(() => broken = Option.some(error))),
              // the usage is read from what arrived, however the stream ended: a reader that stops at
              // the last event (a completion's usage) ends it by interruption
              Effect.ensuring(
                metering.metered
                  ? Effect.suspend(() =>
                    metering.report(slot, response, new TextDecoder().decode(Buffer.concat(kept.chunks)))
                  )
                  : Effect.void
              )
            )
        }
        const once = Effect.suspend(() => {
          if (Option.isSome(broken)) return Effect.fail(broken.value)
          // headers handed over, then a failure: sending again would give the reader a second body
          if (handedOver) return Effect.interrupt
          return Effect.flatMap(Scope.make(), (scope) =>
            Effect.onExit(
              Effect.provideService(
                Effect.flatMap(sending(scoped.execute(request)), (
                  response
                ): Effect.Effect<void, E | Upstream.StatusError | Api.BodyError | HttpClientError.ResponseError, R> => {
                  const answer: Effect.Effect<
                    void,
                    Upstream.StatusError | errors.StreamIdleTimeout | HttpClientError.ResponseError
                  > = response.status < 200 || response.status >= 300 ? failStatus(request, response) : pump(response)
                  return Effect.zipRight(learned(response), answer)
                }),
                Scope.Scope,
                scope
              ),
              (exit) => Scope.close(scope, exit)
            ))
        })
        const base = callOptions(request)
        const perCall = metering.metered ? yield* metering.prepare(request, base, slot) : base
        const streamCall = provider.call(
          once,
          // the stream's budget is its idle timeout, not the attempt's
          perCall.attemptTimeout === undefined ? { ...perCall, attemptTimeout: Duration.infinity } : perCall
        )
        const fiber = yield* scheduled(streamCall as Effect.Effect<void, unknown, R>).pipe(
          Effect.onExit((exit) => {
            if (!handedOver) {
              if (Exit.isFailure(exit)) {
                const failure = Cause.failureOption(exit.cause)
                if (Option.isSome(failure) && Upstream.isHandedBack(failure.value)) {
                  return Deferred.succeed(head, Upstream.handedBack(failure.value))
                }
              }
              return Exit.isFailure(exit) ? Deferred.failCause(head, exit.cause) : Deferred.interrupt(head)
            }
            return Deferred.succeed(done, exit)
          }),
          Effect.forkIn(buildScope)
        )
        return yield* Effect.onInterrupt(Deferred.await(head), () => Fiber.interrupt(fiber))
      })

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
      const resolved = resolve(request)
      if (Either.isLeft(resolved)) return Effect.fail(resolved.left)
      const call: Effect.Effect<HttpClientResponse.HttpClientResponse, unknown, R> = streamedOf(resolved.right)
        ? streamed(resolved.right)
        : scheduled(buffered(resolved.right))
      return asRequestError ? Effect.mapError(call, toRequestError(request)) : call
    }

    return HttpClient.makeWith(
      (request) => Effect.flatMap(request, execute),
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
