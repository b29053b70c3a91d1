/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import * as ProviderMessages from "@sluice/core/ProviderMessages"
import { outcomes } from "@sluice/core/Recording"
import { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type * as Api from "../Provider.js"
import * as ProviderError from "../ProviderError.js"
import { CallFailed } from "./callFailed.js"
import type { State as CircuitState } from "./circuitBreaker.js"

/**
 * From 1 ms doubling to about 9 min: a geocoder answers in tens of milliseconds, an LLM call in
 * tens of seconds, a stuck call is cut by its attempt budget long before the last bucket.
 *
 * @internal
 */
export const callSeconds = Metric.histogram(
  "sluice_call_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 20 }),
  "Time of each attempt's call to a provider, permit held and limiter passed, in seconds"
)

/** @internal */
export const outcomesTotal = Metric.counter("sluice_provider_outcomes_total", {
  description: "Calls through a provider by how they ended",
  incremental: true
})

/** @internal */
export const interruptedTotal = Metric.counter("sluice_provider_interrupted_total", {
  description: "Calls through a provider interrupted by their caller, by the phase they were in",
  incremental: true
})

/** @internal */
export const circuitGauge = Metric.gauge("sluice_provider_circuit_state", {
  description: "A provider's circuit: 0 closed, 1 half-open, 2 open"
})

/** @internal */
export const circuitValue: Record<CircuitState, number> = { closed: 0, "half-open": 1, open: 2 }

/** @internal */
export const outcomeNames: ReadonlyArray<Api.Outcome> = outcomes

/** @internal */
export const phases: ReadonlyArray<ProviderError.Phase> = ProviderMessages.phases

/** @internal */
export const recordOf = <K extends string, V>(keys: ReadonlyArray<K>, f: (key: K) => V): Record<K, V> => {
  const record = {} as Record<K, V>
  for (const key of keys) record[key] = f(key)
  return record
}

/**
 * The labels of one provider's series, made once: a metric update with them allocates nothing.
 *
 * @internal
 */
export class Labels {
  readonly name: ReadonlyArray<MetricLabel.MetricLabel>
  readonly outcome: Record<Api.Outcome, ReadonlyArray<MetricLabel.MetricLabel>>
  readonly phase: Record<ProviderError.Phase, ReadonlyArray<MetricLabel.MetricLabel>>
  constructor(provider: string) {
    const name = MetricLabel.make("name", provider)
    this.name = [name]
    this.outcome = recordOf(outcomeNames, (outcome) => [name, MetricLabel.make("outcome", outcome)])
    this.phase = recordOf(phases, (phase) => [name, MetricLabel.make("phase", phase)])
  }
}

/**
 * How a call ended, read on its exit before the call's own errors are unwrapped.
 *
 * @internal
 */
export const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Api.Outcome => {
  if (Exit.isSuccess(exit)) return "success"
  if (Cause.isInterruptedOnly(exit.cause)) return "interrupted"
  const failure = Cause.failureOrCause(exit.cause)
  if (Either.isRight(failure)) return "call_error"
  const error = failure.left
  if (error instanceof CallFailed) return "call_error"
  if (error instanceof ProviderError.CallTimeout) return "call_timeout"
  if (error instanceof ProviderError.TotalTimeout) return "total_timeout"
  if (error instanceof ProviderError.CircuitOpen) return "circuit_open"
  if (error instanceof ProviderError.RetryBudgetExhausted) return "retry_budget_exhausted"
  if (error instanceof ProviderError.ProviderClosed) return "closed"
  if (Bulkhead.isBulkheadError(error)) return error._tag === "BulkheadFull" ? "bulkhead_full" : "permit_wait_timeout"
  if (RateLimiter.isRateLimiterError(error)) return error._tag === "RateLimitExceeded" ? "rate_limited" : "store_error"
  return "call_error"
}
