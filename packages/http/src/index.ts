/**
 * One connection pool for the process, sized from the bulkheads that use it.
 *
 * A connection pool limits connections per origin, and a pool smaller than the bulkheads in front
 * of it is an invisible second bound: callers hold a permit, then queue inside the HTTP client,
 * where no metric of theirs sees them. Each provider's HTTP client therefore *reserves* its
 * bulkhead's `maxPermits` on its origin when its layer is built; the pool for an origin is created
 * on first use with exactly the sum of the reservations, and a limit set by the user that is
 * smaller than that sum is refused when the layer is built, naming the origin and the numbers.
 *
 * @since 0.1.0
 */
export * as HttpPool from "./HttpPool.js"

/**
 * An HTTP client per provider, on `@effect/platform`'s `HttpClient`.
 *
 * Every request runs through its provider (circuit breaker, then per attempt bulkhead → rate
 * limiter → attempt timeout → the request **and the reading of its body** → release), so the permit
 * is held until the body has been read and decoded, or the request aborted. Every response body,
 * error responses and responses that will be retried included, is drained (up to a bound) or
 * aborted before the permit is released: an unread body keeps its connection busy, and a
 * connection held without a permit is exactly the concurrency a bulkhead exists to prevent.
 *
 * A 429 (or a 503 with `Retry-After`) pauses the provider's limiter for everyone, then the call is
 * retried through bulkhead and limiter again, within the provider's retry budget.
 *
 * @since 0.1.0
 */
export * as ProviderHttpClient from "./ProviderHttpClient.js"
