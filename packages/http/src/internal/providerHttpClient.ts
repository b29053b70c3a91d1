import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as HttpPool from "../HttpPool.js"
import type * as Api from "../ProviderHttpClient.js"
import { DEFAULT_USER_AGENT } from "./clientSettings.js"
import * as errors from "./errors.js"
import type * as Metering from "./metering.js"
import { type RetryAfterBounds, retryAfterMillis } from "./retryAfter.js"
import { setup } from "./setup.js"
import * as Upstream from "./upstream.js"

/** @internal */
export const upstreamStatusTotal = Upstream.upstreamStatusTotal

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("@sluice/http/ProviderHttpClient") as Api.TypeId

/** @internal */
export const parseRetryAfter = (
  header: string | undefined,
  now: number,
  bounds: RetryAfterBounds
): Duration.Duration => Duration.millis(retryAfterMillis(header, now, bounds))

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"])

/** @internal */
export const make = <Err>(
  provider: Provider.Provider<Err>,
  options: Api.Options
): Effect.Effect<
  Api.ProviderHttpClient<Err>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | HttpClient.HttpClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const name = provider.name
    // query strings stay out of errors: they often carry API keys
    const urlOf = (request: HttpClientRequest.HttpClientRequest) => `${baseUrl}${request.url}`
    const { body, call, failStatus, metering, scheduled, sending, settings } = yield* setup(
      provider as Provider.Provider<unknown>,
      options,
      urlOf,
      false
    )
    const origin = settings.origin
    // once the options are checked (`setup`)
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const headers = { "user-agent": options.userAgent ?? DEFAULT_USER_AGENT, ...options.headers }
    // for `text` and `json`, which read every body they get to its end or give it up (`abandon`):
    // the platform client aborts a request whose reader is interrupted, headers or body
    const reading = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        HttpClientRequest.setHeaders(HttpClientRequest.prependUrl(request, baseUrl), headers)
      )
    )
    // for `execute` and `stream`, whose handlers may leave part of a body: the connection's lifetime
    // is the attempt's scope, closed before the permit goes back, so a body nobody read is aborted
    // there, not left to the garbage collector (see `attempt`)
    const client = HttpClient.withScope(reading)
    const learn = metering.learn
    /** A 2xx response to `handle`, any other fails. */
    const answer = <A, E, R>(
      request: HttpClientRequest.HttpClientRequest,
      response: HttpClientResponse.HttpClientResponse,
      handle: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Api.HttpError, R> =>
      response.status >= 200 && response.status < 300 ? handle(response) : failStatus(request, response)

    /**
     * Sends `request` through `via`, then hands a 2xx response to `handle` and fails any other;
     * with a header profile, what the headers say goes to the limiter first, whatever the status.
     */
    const exchange = <A, E, R, RC>(
      via: HttpClient.HttpClient.With<HttpClientError.HttpClientError, RC>,
      request: HttpClientRequest.HttpClientRequest,
      handle: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Api.HttpError, R | RC> =>
      Effect.flatMap(
        sending(via.execute(request)),
        learn === undefined
          ? (response) => answer(request, response, handle)
          : (response) => Effect.zipRight(learn(response), answer(request, response, handle))
      )

    /**
     * One attempt of `execute` or `stream`: the exchange in a scope of its own that `withScope` ties
     * the request to. Closing it when the attempt ends, however it ends, aborts whatever `handle`
     * left of the body.
     */
    const attempt = <A, E, R>(
      request: HttpClientRequest.HttpClientRequest,
      handle: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Api.HttpError, Exclude<R, Scope.Scope>> =>
      Effect.flatMap(Scope.make(), (scope) =>
        Effect.onExit(
          Effect.provideService(exchange(client, request, handle), Scope.Scope, scope),
          (exit) => Scope.close(scope, exit)
        ))

    /**
     * One attempt of `text` or `json`: the exchange, with `read` reading the body. Every ending lets
     * go of the connection before the permit does: a body read to its end has left it to the pool,
     * an error body is drained or aborted (`failStatus`), a body refused unread is aborted
     * (`abandon`), and an interruption (by the caller, the attempt budget, the shutdown) aborts the
     * request, whether it waits for the headers or reads the body. Without the scope of `attempt` (a
     * context update on the way in, another on the way out), which only a handler that may leave
     * part of the body needs.
     */
    const attemptRead = <A, E, R>(
      request: HttpClientRequest.HttpClientRequest,
      read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | Api.HttpError, R> => exchange(reading, request, read)

    const callOptions = (
      request: HttpClientRequest.HttpClientRequest,
      options: Api.RequestOptions | undefined
    ): Provider.CallOptions => {
      const idempotent = options?.idempotent === true || idempotentMethods.has(request.method) ||
        request.headers["idempotency-key"] !== undefined
      const { idempotent: _, ...rest } = options ?? {}
      return idempotent ? rest : { ...rest, retry: false }
    }

    const metered = <A, E, R>(
      request: HttpClientRequest.HttpClientRequest,
      options: Api.RequestOptions | undefined,
      run: (slot: Metering.Slot) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, unknown, R> => scheduled(call(request, callOptions(request, options), run))

    const execute: Api.ProviderHttpClient<Err>["execute"] = (request, handle, options) =>
      metered(request, options, (slot) =>
        attempt(request, (response) =>
          Effect.zipRight(metering.report(slot, response, undefined), handle(response)))) as never

    const text: Api.ProviderHttpClient<Err>["text"] = (request, options) =>
      metered(request, options, (slot) =>
        attemptRead(request, (response) =>
          Effect.tap(body.readText(request, response), (body) =>
            metering.report(slot, response, body)))) as never

    const json: Api.ProviderHttpClient<Err>["json"] = <A, I, R>(
      request: HttpClientRequest.HttpClientRequest,
      schema: Schema.Schema<A, I, R>,
      options?: Api.RequestOptions
    ) => {
      const decode = Schema.decodeUnknown(schema)
      const handle = (slot: Metering.Slot) => (response: HttpClientResponse.HttpClientResponse) =>
        body.readText(request, response).pipe(
          Effect.flatMap((body) =>
            Effect.try({
              try: (): unknown =>
                JSON.parse(body),
              catch: (cause) =>
                new errors.DecodeError({
                  provider: name,
                  url: urlOf(request),
                  reason: `not JSON (${cause instanceof Error ? cause.message : String(cause)}): ${body.slice(0, 80)}`,
                  cause
                })
            })
          ),
          // the usage is read from the body parsed once, before the schema sees it
          Effect.tap((value) =>
            metering.report(slot, response, value)
          ),
          Effect.flatMap((value) =>
            Effect.mapError(decode(value), (error) =>
              new errors.DecodeError({
                provider: name,
                url: urlOf(request),
                reason: ParseResult.TreeFormatter.formatErrorSync(error),
                cause: error
              }))
          )
        )
      return metered(request, options, (slot) =>
        attemptRead(request, handle(slot))) as never
    }

    const stream: Api.ProviderHttpClient<Err>["stream"] = (request, options) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // The call stays open while the consumer reads: it pushes chunks into a small queue and
        // ends when the body ends, so the permit is held for the whole stream.
        const queue = yield* Effect.acquireRelease(
          Queue.bounded<Exit.Exit<Uint8Array, Option.Option<unknown>>>(16),
          Queue.shutdown
        )
        let received = 0
        // what ended the stream after its first chunk: a retry fails with it again, unsent, since
        // the consumer has part of the body (a retry would deliver it twice)
        let broken: Option.Option<unknown> = Option.none()
        const slot: Metering.Slot = { usage: undefined }
        const pump = (response: HttpClientResponse.HttpClientResponse) =>
          Effect.zipRight(metering.report(slot, response, undefined), streamed(response))
        const streamed = (response: HttpClientResponse.HttpClientResponse) =>
          response.stream.pipe(
            Stream.timeoutFail(
              () =>
                new errors.StreamIdleTimeout({
                  provider: name,
                  url: urlOf(request),
                  idleTimeout: settings.idleTimeout,
                  received
                }),
              settings.idleTimeout
            ),
            Stream.runForEach((chunk) => {
              received += chunk.length
              return Queue.offer(queue, Exit.succeed(chunk))
            }),
            // a body that broke halfway fails the call: the breaker and the outcomes count it, and
            // the consumer gets the failure once the call has ended
            Effect.tapError((error) =>
              Effect.sync(() => {
                if (received > 0) {
                  broken = Option.some(error)
                }
              })
            )
          )
        const once = Effect.suspend(() =>
          Option.isSome(broken) ? Effect.fail(broken.value) : attempt(request, pump)
        )
        const base = callOptions(request, options)
        const perCall = metering.metered ? yield* metering.prepare(request, base, slot) : base
        // the pump ends with the body, or fails: either way the scope is closed, and a stream whose
        // consumer stopped early is aborted
        const call = provider.call(
          once,
          perCall.attemptTimeout === undefined
            // the stream's budget is its idle timeout, not the attempt's
            ? { ...perCall, attemptTimeout: Duration.infinity }
            // an attempt budget of its own bounds the whole stream; ending it mid-body is a
            // CallTimeout the provider would retry, sending the request again: one attempt only
            : { ...perCall, retry: false }
        ) as Effect.Effect<unknown, unknown>
        yield* scheduled(call).pipe(
          Effect.matchCauseEffect({
            onFailure: (cause) =>
              Queue.offer(queue, Exit.failCause(Cause.map(cause, Option.some))),
            onSuccess: () => Queue.offer(queue, Exit.fail(Option.none()))
          }),
          Effect.forkScoped
        )
        return Stream.repeatEffectOption(Effect.flatten(Queue.take(queue)))
      })) as never

    const self: Api.ProviderHttpClient<Err> = { [TypeId]: TypeId, provider, origin, execute, json, text, stream }
    return self
  })

/** @internal */
export const withUpstreamErrors = <const S extends Api.UpstreamErrorSettings>(
  settings: S
): S & { readonly isUpstreamError: (error: unknown) => boolean } => {
  const own = settings.isUpstreamError
  return {
    ...settings,
    isUpstreamError: own === undefined
      ? errors.isUpstreamError
      : (error: unknown) => errors.isUpstreamError(error) || own(error)
  }
}

/** @internal */
export const layer = <I, P>(
  tag: Context.Tag<I, Api.ProviderHttpClient>,
  providerTag: Context.Tag<P, Provider.Provider>,
  options: Api.Options
): Layer.Layer<I, HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient> =>
  Layer.scoped(tag, Effect.flatMap(providerTag, (provider) => make(provider, options)))

/** @internal */
export const layerConfig = <I, P>(
  tag: Context.Tag<I, Api.ProviderHttpClient>,
  providerTag: Context.Tag<P, Provider.Provider>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, ConfigError.ConfigError | HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient> =>
  Layer.scoped(
    tag,
    Effect.flatMap(config, (options) => Effect.flatMap(providerTag, (provider) => make(provider, options)))
  )

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): Api.TagClass<Self, Id> => {
  const self = Context.Tag(`@sluice/http/ProviderHttpClient/${id}`)<Self, Api.ProviderHttpClient>()
  return Object.assign(self, {
    id,
    layer: <P>(providerTag: Context.Tag<P, Provider.Provider>, options: Api.Options) =>
      layer(self, providerTag, options),
    layerConfig: <P>(providerTag: Context.Tag<P, Provider.Provider>, config: Config.Config<Api.Options>) =>
      layerConfig(self, providerTag, config)
  })
}
