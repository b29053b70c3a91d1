/**
 * A circuit breaker on its own, around any effect: after enough failures it opens and fails calls
 * at once with `CircuitOpen`, then lets one probe through; the probe's success closes it. A
 * provider builds one from its `circuitBreaker` option, or takes one given here.
 *
 * @since 2.0.0
 */
export * as CircuitBreaker from "./CircuitBreaker.js"

/**
 * A provider is everything sluice puts around the calls to one upstream: a bulkhead (how many
 * calls are in flight), a rate limiter (how many start per window), four budgets (permit wait,
 * limiter wait, one attempt, the total), retries with a retry budget, a circuit breaker, a
 * graceful shutdown, and the metrics that tell which bound binds.
 *
 * One attempt, outermost first: bulkhead → rate limiter → attempt timeout → the call → release.
 * Retries sit outside: each attempt takes a fresh permit and token, and backoff sleeps hold
 * neither. Every refusal is its own typed error, next to the call's own errors.
 *
 * @since 2.0.0
 */
export * as Provider from "./Provider.js"

/**
 * Every error a provider can produce, as values: its own (`CallTimeout`, `TotalTimeout`,
 * `CircuitOpen`, `RetryBudgetExhausted`, `ProviderClosed`) and those of its bulkhead and limiter,
 * re-exported unchanged so that one import gives `Effect.catchTag`, `instanceof` and the guard.
 *
 * @since 2.0.0
 */
export * as ProviderError from "./ProviderError.js"

/**
 * The options of a provider and of one call: the bulkhead and limiter it is built from, its
 * budgets, retries with their backoff and budget, the circuit breaker, and a call's cost and
 * usage. `Provider` re-exports each under the same name (`Provider.Options`).
 *
 * @since 2.0.0
 */
export * as ProviderOptions from "./ProviderOptions.js"

/**
 * A provider's run as time series: what it started, waited for, held and got back, per time
 * bucket, and the waits as histograms over the whole run. Off by default (`recording` in the
 * provider's options); read with `provider.recording`, plain data a report renders
 * (`@sluice/report`).
 *
 * Memory is flat on any run length: at most `maxBuckets` buckets per series; when a run outgrows
 * them, neighbouring buckets merge and the bucket doubles (sums add, maxima take the larger), so
 * the whole run stays in view at a coarser step.
 *
 * @since 2.0.0
 */
export * as ProviderRecording from "./ProviderRecording.js"

/**
 * What a provider reports about itself: counters, phase times over its recent attempts, and the
 * verdict on which bound binds (`provider.stats`), with the verdict's rule as a function.
 *
 * @since 2.0.0
 */
export * as ProviderStats from "./ProviderStats.js"

/**
 * A retry budget on its own, around any effect: retries are allowed while the retries in a sliding
 * window stay below `max(minRetries, ratio × first attempts)`, so that an upstream in trouble sees
 * at most `ratio` extra calls instead of a retry storm. A provider builds one from its
 * `retry.budget` option, or takes one given here; several effects may share one.
 *
 * @since 2.0.0
 */
export * as RetryBudget from "./RetryBudget.js"

/**
 * How many permits a provider's bulkhead needs, from Little's law: to sustain `rate` calls per
 * second that each take `medianLatency`, `rate × medianLatency` calls must be in flight. Fewer,
 * and the bulkhead binds before the quota; many more only queue work inside the process. The
 * result carries its derivation as text, so a configuration can carry its reason.
 *
 * @since 2.0.0
 */
export * as Sizing from "./Sizing.js"
