import { type RetryAfterBounds, retryAfterMillis } from "@sluice/core/RetryAfter"
import type * as Provider from "@sluice/provider/Provider"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as HttpPool from "../HttpPool.js"
import type * as Api from "../ProviderHttpClient.js"
import * as Calls from "./calls.js"
import * as errors from "./errors.js"
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
    // the middleware's calls, with error statuses failing rather than handed back
    const calls = yield* Calls.make(
      yield* HttpClient.HttpClient,
      provider as Provider.Provider<unknown>,
      options,
      false
    )
    const send = <A>(
      request: HttpClientRequest.HttpClientRequest,
      run: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<A, unknown>
    ): Effect.Effect<A, unknown> => Result.match(calls.resolve(request), { onFailure: Effect.fail, onSuccess: run })

    const execute: Api.ProviderHttpClient<Err>["execute"] = (request, handle, options) =>
      Effect.flatMap(send(request, (request) => calls.buffered(request, options)), handle) as never

    const text: Api.ProviderHttpClient<Err>["text"] = (request, options) =>
      execute(request, (response) => response.text, options) as never

    const json: Api.ProviderHttpClient<Err>["json"] = (request, schema, options) => {
      const decode = Schema.decodeUnknownEffect(schema)
      return execute(request, (response) => {
        const decodeError = (reason: string, cause: unknown) =>
          new errors.DecodeError({ provider: name, url: response.request.url, reason, cause })
        return response.text.pipe(
          Effect.flatMap((body) =>
            Effect.try({
              try: (): unknown => JSON.parse(body),
              catch: (cause) =>
                decodeError(
                  `not JSON (${cause instanceof Error ? cause.message : String(cause)}): ${body.slice(0, 80)}`,
                  cause
                )
            })
          ),
          Effect.flatMap((value) =>
            Effect.mapError(
              decode(value),
              (error) => decodeError(error.message, error)
            )
          )
        )
      }, options) as never
    }

    const stream: Api.ProviderHttpClient<Err>["stream"] = (request, options) =>
      Stream.unwrap(
        Effect.map(
          send(request, (request) => calls.streamed(request, options)),
          ({ body, response }) => body ?? response.stream
        )
      ) as never

    const self: Api.ProviderHttpClient<Err> = {
      [TypeId]: TypeId,
      provider,
      origin: calls.origin,
      execute,
      json,
      text,
      stream
    }
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
  tag: Context.Key<I, Api.ProviderHttpClient>,
  providerTag: Context.Key<P, Provider.Provider>,
  options: Api.Options
): Layer.Layer<I, HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient> =>
  Layer.effect(tag, Effect.flatMap(providerTag, (provider) => make(provider, options)))

/** @internal */
export const layerConfig = <I, P>(
  tag: Context.Key<I, Api.ProviderHttpClient>,
  providerTag: Context.Key<P, Provider.Provider>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, Config.ConfigError | HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient> =>
  Layer.effect(
    tag,
    Effect.flatMap(config, (options) => Effect.flatMap(providerTag, (provider) => make(provider, options)))
  )

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): Api.TagClass<Self, Id> => {
  const self = Context.Service<Self, Api.ProviderHttpClient>()(`@sluice/http/ProviderHttpClient/${id}`)
  return Object.assign(self, {
    id,
    layer: <P>(providerTag: Context.Key<P, Provider.Provider>, options: Api.Options) =>
      layer(self, providerTag, options),
    layerConfig: <P>(providerTag: Context.Key<P, Provider.Provider>, config: Config.Config<Api.Options>) =>
      layerConfig(self, providerTag, config)
  }) as never
}
