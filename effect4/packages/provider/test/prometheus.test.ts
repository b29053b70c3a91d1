// A provider's metrics in the Prometheus exposition format, as Effect 4's own
// `PrometheusMetrics.format` renders the registry the provider records into.
import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { Effect } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { uniqueName } from "./utils.js"

describe("export to Prometheus", () => {
  it.effect("a provider's outcomes, call times and its bulkhead's permit waits are in the exposition", () =>
    Effect.gen(function*() {
      const name = uniqueName("prometheus")
      const provider = yield* Provider.make({
        name,
        bulkhead: { permits: 2 },
        attemptTimeout: "5 seconds",
        circuitBreaker: { consecutiveFailures: 3 }
      })
      yield* provider.call(Effect.succeed("ok"))
      yield* Effect.flip(provider.call(Effect.fail("nope")))
      const body = yield* PrometheusMetrics.format()
      assert.match(
        body,
        new RegExp(`sluice_provider_outcomes_total\\{[^}]*name="${name}"[^}]*outcome="success"[^}]*\\} 1`)
      )
      assert.match(
        body,
        new RegExp(`sluice_provider_outcomes_total\\{[^}]*name="${name}"[^}]*outcome="call_error"[^}]*\\} 1`)
      )
      assert.match(body, new RegExp(`sluice_call_seconds_bucket\\{[^}]*name="${name}"`))
      assert.match(body, new RegExp(`sluice_call_seconds_count\\{[^}]*name="${name}"[^}]*\\} 2`))
      assert.match(body, new RegExp(`sluice_permit_wait_seconds_count\\{[^}]*name="${name}"[^}]*\\} 2`))
      assert.match(body, new RegExp(`sluice_provider_circuit_state\\{[^}]*name="${name}"[^}]*\\} 0`))
    }))
})
