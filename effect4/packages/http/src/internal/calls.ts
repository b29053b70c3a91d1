/**
 * The calls both clients make of a provider: a request resolved against the provider's origin,
 * then sent as a call, buffered (its whole body read inside the permit) or streamed (the permit
 * held until its body ends). The middleware wraps them in an `HttpClient`; `ProviderHttpClient`'s
 * methods are a few lines each over them.
 *
 * @internal
 */
import type * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Api from "../Middleware.js"
import { DEFAULT_USER_AGENT } from "./clientSettings.js"
import * as errors from "./errors.js"
import type * as Metering from "./metering.js"
import { setup } from "./setup.js"
import * as Upstream from "./upstream.js"

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"])
const handOn = Upstream.handOn

/** What usage is given of a body read whole: parsed JSON, text, or the bytes. */
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

/**
 * The per-request options of `ProviderHttpClient`: the provider's call options, and `idempotent`
 * to retry a request whose method is not.
 *
 * @internal
 */
export interface PerRequest extends Provider.CallOptions {
  readonly idempotent?: boolean | undefined
}

/**
 * A streamed call's answer: the upstream's status and headers with the body to read (`body`), or,
 * for an error status handed back, the whole response (`body` undefined).
 *
 * @internal
 */
export interface Streamed {
  readonly response: HttpClientResponse.HttpClientResponse
  readonly body: Stream.Stream<Uint8Array, unknown> | undefined
}

/**
 * The calls of `provider` over `client`. `handBack`: an error status, after the provider's last
 * attempt, is answered with the response as the upstream sent it (the middleware); otherwise it
 * fails with `UpstreamRateLimited` / `UpstreamStatus` (`ProviderHttpClient`).
 *
 * @internal
 */
export const make = <E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  provider: Provider.Provider<unknown>,
  options: Api.Options,
  handBack: boolean
) =>
  Effect.gen(function*() {
    const name = provider.name
    const urlOf = (request: HttpClientRequest.HttpClientRequest) => request.url
    const { body, call, failStatus, metering, scheduled, sending, settings } = yield* setup(
      provider,
      options,
      urlOf,
      handBack
    )
    const origin = settings.origin
    const buildScope = yield* Effect.scope

    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const originSlash = `${origin}/`
    const defaults = Object.entries({ "user-agent": options.userAgent ?? DEFAULT_USER_AGENT, ...options.headers })
      .map(([key, value]) => [key.toLowerCase(), value] as const)
    const scoped = HttpClient.withScope(client)
    const learn = metering.learn
    const idempotentOf = options.idempotent

    /** The request with the provider's base URL and default headers, or why it is not the provider's. */
    const resolve = (
      request: HttpClientRequest.HttpClientRequest
    ): Result.Result<HttpClientRequest.HttpClientRequest, HttpClientError.HttpClientError> => {
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
          return Result.fail(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.InvalidUrlError({
                request,
                description: `provider "${name}" reaches ${origin} only, not ${other}`
              })
            })
          )
        }
      }
      const missing = defaults.filter(([key]) => resolved.headers[key] === undefined)
      return Result.succeed(
        missing.length === 0 ? resolved : HttpClientRequest.setHeaders(resolved, Object.fromEntries(missing))
      )
    }

    const callOptions = (request: HttpClientRequest.HttpClientRequest, perRequest: PerRequest | undefined) => {
      const idempotent = perRequest?.idempotent === true || (idempotentOf === undefined
        ? idempotentMethods.has(request.method) || request.headers["idempotency-key"] !== undefined
        : typeof idempotentOf === "boolean"
        ? idempotentOf
        : idempotentOf(request))
      if (perRequest === undefined) return idempotent ? {} : { retry: false }
      const { idempotent: _, ...rest } = perRequest
      return idempotent ? rest : { ...rest, retry: false }
    }

    const learned = (response: HttpClientResponse.HttpClientResponse) =>
      learn === undefined ? Effect.void : learn(response)

    /**
     * One attempt of a buffered request: the exchange and the whole body, handed on from memory.
     * The request lives in the attempt's scope: however the attempt ends (a body refused at its
     * Content-Length or past `maxBodySize`, an error body drained in part, an interruption), its
     * close aborts what is left of the exchange.
     */
    const attempt = (
      request: HttpClientRequest.HttpClientRequest,
      slot: Metering.Slot
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown, R> =>
      Effect.scoped(Effect.flatMap(sending(scoped.execute(request)), (response): Effect.Effect<
        HttpClientResponse.HttpClientResponse,
        unknown,
        R
      > => {
        if (response.status < 200 || response.status >= 300) {
          return Effect.andThen(learned(response), failStatus(request, response))
        }
        const read = Effect.flatMap(body.readBytes(request, response), (bytes) =>
          metering.metered
            ? Effect.as(metering.report(slot, response, usageBody(response, bytes)), handOn(request, response, bytes))
            : Effect.succeed(handOn(request, response, bytes)))
        return learn === undefined ? read : Effect.andThen(learn(response), read)
      }))

    /** A resolved request, its body read whole inside the permit (on the scheduler of `Options.scheduler`). */
    const buffered = (
      request: HttpClientRequest.HttpClientRequest,
      perRequest?: PerRequest
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown, R> => {
      const sent = call(request, callOptions(request, perRequest), (slot) => attempt(request, slot))
      // an error status, answered after the provider's last attempt: the response as the upstream sent it
      return scheduled(
        handBack
          ? Effect.catchIf(sent, Upstream.isHandedBack, (error) => Effect.succeed(Upstream.handedBack(error)))
          : sent
      )
    }

    /**
     * A resolved request, streamed: the call runs on a fiber of its own, and its answer is given at
     * the headers with a body fed from a queue by the attempt, which holds its permit until the body
     * ends, fails, or its reader stops or stays idle.
     */
    const streamed = (
      request: HttpClientRequest.HttpClientRequest,
      perRequest?: PerRequest
    ): Effect.Effect<Streamed, unknown, R> =>
      Effect.gen(function*() {
        const head = yield* Deferred.make<Streamed, unknown>()
        // the body's chunks, then the call's end (`Queue.end`) or its failure: queued chunks are
        // read before either
        const queue = yield* Queue.bounded<Uint8Array, unknown>(16)
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
        ): Effect.Effect<void, HttpClientError.HttpClientError | errors.StreamIdleTimeout> => {
          let received = 0
          const reader = Stream.fromQueue(queue).pipe(Stream.ensuring(Queue.shutdown(queue)))
          handedOver = true
          return Deferred.succeed(head, { response, body: reader }).pipe(
            Effect.andThen(response.stream.pipe(
              Stream.timeoutOrElse({
                duration: settings.idleTimeout,
                orElse: () => Stream.fail(idle(received))
              }),
              Stream.runForEach((chunk) => {
                received += chunk.length
                if (metering.metered && kept.size + chunk.length <= settings.maxBodySize) {
                  kept.chunks.push(chunk)
                  kept.size += chunk.length
                }
                // a reader that stops reading holds the permit for the idle timeout at most; one
                // that has stopped (the queue shut down) ends the call
                return Effect.timeoutOrElse(
                  Effect.flatMap(Queue.offer(queue, chunk), (offered) => offered ? Effect.void : Effect.interrupt),
                  { duration: settings.idleTimeout, orElse: () => Effect.fail(idle(received)) }
                )
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
                Effect.flatMap(sending(scoped.execute(request)), (response): Effect.Effect<void, unknown, R> => {
                  const answer: Effect.Effect<void, unknown> = response.status < 200 || response.status >= 300
                    ? failStatus(request, response)
                    : pump(response)
                  return Effect.andThen(learned(response), answer)
                }),
                Scope.Scope,
                scope
              ),
              (exit) => Scope.close(scope, exit)
            ))
        })
        const base = callOptions(request, perRequest)
        const perCall = metering.metered ? yield* metering.prepare(request, base, slot) : base
        const streamCall = provider.call(
          once,
          perCall.attemptTimeout === undefined
            // the stream's budget is its idle timeout, not the attempt's
            ? { ...perCall, attemptTimeout: Duration.infinity }
            // an attempt budget of its own bounds the whole stream; ending it mid-body is a
            // CallTimeout the provider would retry, sending the request again: one attempt only
            : { ...perCall, retry: false }
        )
        const fiber = yield* scheduled(streamCall as Effect.Effect<void, unknown, R>).pipe(
          Effect.onExit((exit) => {
            if (!handedOver) {
              if (handBack && Exit.isFailure(exit)) {
                const failure = Cause.findErrorOption(exit.cause)
                if (Option.isSome(failure) && Upstream.isHandedBack(failure.value)) {
                  return Deferred.succeed(head, { response: Upstream.handedBack(failure.value), body: undefined })
                }
              }
              return Exit.isFailure(exit) ? Deferred.failCause(head, exit.cause) : Deferred.interrupt(head)
            }
            return Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause)
          }),
          Effect.forkIn(buildScope)
        )
        return yield* Effect.onInterrupt(Deferred.await(head), () => Fiber.interrupt(fiber))
      })

    return { origin, settings, resolve, buffered, streamed } as const
  })
