import type * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as HttpPool from "../HttpPool.js"
import type * as Api from "../ProviderHttpClient.js"
import { scheduledOn } from "./checkPhase.js"
import { check } from "./clientSettings.js"
import { tag as HttpPoolTag } from "./httpPool.js"
import * as Metering from "./metering.js"
import * as responseBody from "./responseBody.js"
import * as Upstream from "./upstream.js"

/**
 * Reserves the bulkhead's `maxPermits` on `origin` in the pool for the current scope: the pool holds
 * as many connections for this origin as the bulkhead can ever hold permits; with `preconnect`,
 * opens them.
 *
 * @internal
 */
export const reserveConnections = (
  pool: HttpPool.Service,
  provider: Provider.Provider<unknown>,
  origin: string,
  preconnect: boolean
): Effect.Effect<void, HttpPool.PoolTooSmall, Scope.Scope> =>
  Effect.gen(function*() {
    const name = provider.name
    yield* pool.reserve({ origin, provider: name, connections: provider.bulkhead.maxPermits })
    if (!preconnect) return
    const { failure, opened, requested } = yield* pool.preconnect(origin, provider.bulkhead.maxPermits)
    if (opened < requested) {
      yield* Effect.logWarning(
        `provider "${name}": opened ${opened} of ${requested} connections to ${origin} ahead of its calls` +
          (failure === undefined ? "" : ` (${failure})`)
      )
    }
  })

/**
 * What both `ProviderHttpClient` and the middleware are built from: the options checked (a defect
 * naming what is wrong), the pool's connections reserved, and the body reader, the status check and
 * the metering of `provider`. `keep`: error responses are kept for the middleware to hand back.
 *
 * @internal
 */
export const setup = (
  provider: Provider.Provider<unknown>,
  options: Api.Options,
  urlOf: (request: HttpClientRequest.HttpClientRequest) => string,
  keep: boolean
) =>
  Effect.gen(function*() {
    const name = provider.name
    const settings = yield* Result.match(check(name, options), {
      onFailure: (why) => Effect.die(new Cause.IllegalArgumentError(why)),
      onSuccess: Effect.succeed
    })
    yield* reserveConnections(yield* HttpPoolTag, provider, settings.origin, options.preconnect === true)
    const body = responseBody.make({
      provider: name,
      maxBodySize: settings.maxBodySize,
      errorBodyLimit: settings.errorBodyLimit,
      urlOf
    })
    const failStatus = Upstream.failStatus({
      provider,
      retryAfter: settings.retryAfter,
      drain: body.drainKeeping,
      urlOf,
      keep
    })
    const metering = Metering.make(provider, options)
    const unmetered: Metering.Slot = { usage: undefined }
    const tracePropagation = options.tracePropagation ?? false
    /**
     * One call of `request`, its attempts run by `run` with the call's usage slot: with `usage`,
     * each attempt reports into it what its response says, and settles from it inside the permit.
     */
    const call = <A, E, R>(
      request: HttpClientRequest.HttpClientRequest,
      base: Provider.CallOptions,
      run: (slot: Metering.Slot) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, unknown, R> => {
      if (!metering.metered) return provider.call(run(unmetered), base)
      return Effect.suspend(() => {
        const slot: Metering.Slot = { usage: undefined }
        return Effect.flatMap(metering.prepare(request, base, slot), (perCall) => provider.call(run(slot), perCall))
      })
    }
    return {
      settings,
      body,
      failStatus,
      metering,
      call,
      // trace propagation for the request alone: the caller's setting is back once it is answered
      sending: <A, E, R>(send: Effect.Effect<A, E, R>) =>
        Effect.provideService(send, HttpClient.TracerPropagationEnabled, tracePropagation),
      // on the scheduler of `Options.scheduler`, the caller's outside it
      scheduled: scheduledOn(settings.scheduler)
    }
  })
