// A library built on @sluice/rate-limiter, as a user would publish one: its declarations, emitted
// by tsc and inferred rather than annotated, name the limiter's types where they are declared.
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Layer } from "effect"

/** A service of the library's own, with its layers. */
export class Geocoder extends RateLimiter.Tag("geocoder")<Geocoder>() {}

/** The library's layer on the memory store. */
export const GeocoderLive = Geocoder.layer({ limit: 1, window: "1 second" }).pipe(
  Layer.provide(RateLimiterStore.layerMemory)
)

/** A call under the library's limiter, its refusals in the error channel. */
export const limited = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Geocoder, (limiter) => limiter.run(self))

/** A refusal narrowed with `instanceof`. */
export const rateLimitExceeded = <E>(error: E) => error instanceof RateLimiter.RateLimitExceeded ? error : undefined
