// The README's export snippet, run for real: an OpenTelemetry Prometheus exporter on loopback,
// Effect's metrics bridged to it by @effect/opentelemetry, scraped with fetch.
import { Metrics, Resource } from "@effect/opentelemetry"
import { assert, describe, it } from "@effect/vitest"
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import type { MetricReader } from "@opentelemetry/sdk-metrics"
import { Provider } from "@sluice/provider"
import { Effect, Layer } from "effect"
import * as net from "node:net"
import { uniqueName } from "./utils.js"

/** A port nobody listens on right now: bind port 0, read the one the OS chose, let it go. */
const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("export to Prometheus", () => {
  it.live("a provider's metrics are scraped from the OpenTelemetry Prometheus exporter", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const name = uniqueName("prometheus")
      // The lockfile resolves the exporter's own @opentelemetry/sdk-metrics to 2.12.0 and
      // @effect/opentelemetry's to 2.12.1: the same class twice, whose private fields make the
      // types differ. At run time the exporter only needs the MetricReader contract, which both have.
      const reader = (): MetricReader => new PrometheusExporter({ host: "127.0.0.1", port }) as unknown as MetricReader
      const MetricsLive = Metrics.layer(reader).pipe(
        Layer.provide(Resource.layer({ serviceName: "sluice-test" }))
      )
      const body = yield* Effect.gen(function*() {
        const provider = yield* Provider.make({ name, bulkhead: { permits: 2 }, attemptTimeout: "5 seconds" })
        yield* provider.call(Effect.succeed("ok"))
        const response = yield* Effect.tryPromise(() => fetch(`http://127.0.0.1:${port}/metrics`))
        return yield* Effect.tryPromise(() => response.text())
      }).pipe(Effect.scoped, Effect.provide(MetricsLive))
      assert.match(
        body,
        new RegExp(`sluice_provider_outcomes_total\\{[^}]*name="${name}"[^}]*outcome="success"[^}]*\\} 1`)
      )
      assert.match(body, new RegExp(`sluice_call_seconds_bucket\\{[^}]*name="${name}"`))
      assert.match(body, new RegExp(`sluice_permit_wait_seconds_count\\{[^}]*name="${name}"[^}]*\\} 1`))
    }), { timeout: 20_000 })
})
