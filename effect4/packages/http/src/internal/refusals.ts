import * as Provider from "@sluice/provider/Provider"
import * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Api from "../Middleware.js"
import * as errors from "./errors.js"

/** True for a sluice refusal: a provider's, or the body's bounds. */
export const isRefusal = (u: unknown): u is Api.Refusal =>
  Provider.isProviderError(u) || u instanceof errors.BodyTooLarge || u instanceof errors.StreamIdleTimeout

/**
 * The refusal behind `error`, following `cause` a few levels (an SDK's error, its
 * `HttpClientError`): an `HttpClientError` carries it on its reason, a `TransportError`'s `cause`.
 */
export const refusalOf = (error: unknown): Option.Option<Api.Refusal> => {
  let current = error
  for (let depth = 0; depth < 6; depth++) {
    if (isRefusal(current)) return Option.some(current)
    if (HttpClientError.isHttpClientError(current)) {
      const reason = current.reason
      if (!Predicate.hasProperty(reason, "cause")) return Option.none()
      current = reason.cause
      continue
    }
    if (!Predicate.hasProperty(current, "cause")) return Option.none()
    current = current.cause
  }
  return Option.none()
}

/** @internal */
export const liftRefusals = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | Api.Refusal, R> =>
  Effect.catch(self, (error): Effect.Effect<never, E | Api.Refusal> => {
    const refusal = refusalOf(error)
    return Option.isSome(refusal) ? Effect.fail(refusal.value) : Effect.fail(error)
  })
