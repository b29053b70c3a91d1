/**
 * A provider's refusals on plain fields: who refused (the provider, its shared policy, or a policy
 * on its own), the phase a total budget passed in, and the figures each sentence names.
 */
import { assert, describe, it } from "vitest"
import * as ProviderMessages from "../src/ProviderMessages.js"

describe("ProviderMessages", () => {
  it("the owner is the provider, the provider and its shared policy, or the policy alone", () => {
    assert.strictEqual(ProviderMessages.owner("geo", "circuit breaker", "geo"), `provider "geo"`)
    assert.strictEqual(
      ProviderMessages.owner("geo", "circuit breaker", "shared"),
      `provider "geo" (circuit breaker "shared")`
    )
    assert.strictEqual(ProviderMessages.owner(undefined, "retry budget", "b"), `retry budget "b"`)
  })

  it("a total budget names its phase, and during a backoff the attempt that would have come", () => {
    const base = { provider: "geo", timeoutMillis: 5000, elapsedMillis: 4200, attempts: 2 }
    assert.strictEqual(
      ProviderMessages.totalTimeout({ ...base, phase: "limiter_wait" }),
      `provider "geo": the operation passed its 5s total budget during the wait for the rate limiter of attempt 2`
    )
    assert.strictEqual(
      ProviderMessages.totalTimeout({ ...base, phase: "backoff" }),
      `provider "geo": the backoff before attempt 3 would pass the 5s total budget (4s 200ms spent over 2 attempts)`
    )
    assert.strictEqual(
      ProviderMessages.callTimeout({ provider: "geo", timeoutMillis: 1500, attempt: 1, maxAttempts: 3 }),
      `provider "geo": the call took longer than its 1s 500ms attempt budget (attempt 1 of 3)`
    )
  })

  it("the circuit, the retry budget and a shutdown say their figures", () => {
    const circuit = { breaker: "geo", provider: "geo", failures: 1, openedForMillis: 250, retryAfterMillis: 9750 }
    assert.strictEqual(
      ProviderMessages.circuitOpen({ ...circuit, state: "open" }),
      `provider "geo": the circuit opened 250ms ago after 1 failure; calls fail at once until a probe in 9s 750ms`
    )
    assert.strictEqual(
      ProviderMessages.circuitOpen({ ...circuit, state: "half-open", retryAfterMillis: 0 }),
      `provider "geo": the circuit opened 250ms ago after 1 failure; it is half-open and its single probe is in flight`
    )
    const budget = { budget: "b", provider: undefined, attempt: 2, retries: 1, firstAttempts: 10, allowed: 1 }
    assert.strictEqual(
      ProviderMessages.retryBudgetExhausted({ ...budget, windowMillis: 10_000, lastError: { _tag: "CallTimeout" } }),
      `retry budget "b": attempt 2 refused by the retry budget: 1 retry against 10 first attempts in the last 10s ` +
        `(1 allowed) (the last error: CallTimeout)`
    )
    assert.strictEqual(
      ProviderMessages.retryBudgetExhausted({
        ...budget,
        windowMillis: 10_000,
        lastError: { _tag: "UpstreamStatus", status: 500 }
      }),
      `retry budget "b": attempt 2 refused by the retry budget: 1 retry against 10 first attempts in the last 10s ` +
        `(1 allowed) (the last error: UpstreamStatus 500)`
    )
    assert.strictEqual(
      ProviderMessages.retryBudgetExhausted({ ...budget, windowMillis: 10_000, lastError: "boom" }),
      `retry budget "b": attempt 2 refused by the retry budget: 1 retry against 10 first attempts in the last 10s ` +
        `(1 allowed)`
    )
    assert.strictEqual(
      ProviderMessages.providerClosed({ provider: "geo", reason: "grace-period-elapsed", gracePeriodMillis: 30_000 }),
      `provider "geo" shut down: the call was interrupted after the 30s grace period`
    )
    assert.strictEqual(
      ProviderMessages.providerClosed({ provider: "geo", reason: "closing", gracePeriodMillis: 30_000 }),
      `provider "geo" is shutting down and admits no new calls`
    )
  })
})
