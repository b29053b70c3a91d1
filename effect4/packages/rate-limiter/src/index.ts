/**
 * A rate limiter bounds how many calls to one resource may start per window.
 *
 * Each take is one decision: the store computes the caller's start time (reserving it on every
 * limit) or refuses at once when that start is further away than `maxWait`; the caller then
 * sleeps until its start on its own timer, with no polling. Within a process a pacer checks the
 * actual starts against the same limits: when late timers wake several callers together, at most
 * `burst` start at once and the rest queue in order, so late timers never bunch starts.
 *
 * Limits may be named dimensions with units of their own (requests, tokens): a take's cost is then
 * given per dimension, and `reserve` returns a reservation that is settled with the actual usage
 * once known (LLM tokens), while `tighten` applies what an upstream's rate-limit headers say.
 *
 * @since 2.0.0
 */
export * as RateLimiter from "./RateLimiter.js"

/**
 * The errors of a rate limiter and of its store: a take refused because its start is beyond the
 * wait budget, a cost no limit of its dimension can ever hold, or a store that failed to decide.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 2.0.0
 */
export * as RateLimiterError from "./RateLimiterError.js"

/**
 * The limits a rate limiter enforces: one (`limit` starts per `window`, with its algorithm and
 * burst) or several at once, each on a dimension of its own, and the wait budget that goes with
 * them. `RateLimiter` re-exports them.
 *
 * @since 2.0.0
 */
export * as RateLimiterLimits from "./RateLimiterLimits.js"

/**
 * A rate limiter's metrics, shared by every limiter: labelled by the limiter's `name`, and by
 * `dimension` where usage is measured. `RateLimiter` re-exports them.
 *
 * @since 2.0.0
 */
export * as RateLimiterMetrics from "./RateLimiterMetrics.js"

/**
 * Where a rate limiter's decisions are made and its state is kept.
 *
 * A store decides each take in one call, atomically: given the limits, the costs and the wait
 * budget, it either reserves on every limit and answers with the delay until the caller may start,
 * or reserves nothing and answers with how long to wait before retrying. Everything crossing the
 * boundary is plain data (numbers and strings, no closures), and every time is a relative duration
 * in milliseconds measured on the store's own clock, so no caller ever compares its clock with the
 * store's. That is what lets a Redis store run each decision as one Lua script on the server's
 * `TIME`, in one round trip.
 *
 * `layerMemory` keeps the state in the process and decides on Effect's `Clock` (so `TestClock`
 * drives it). The same contract vectors (`core/testing/limiterVectors.ts`) run against every store.
 *
 * @since 2.0.0
 */
export * as RateLimiterStore from "./RateLimiterStore.js"
