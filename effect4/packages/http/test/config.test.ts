/**
 * The client built from `Config`: the keys, a section set in part, values refused with the key
 * and the value named.
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Config, ConfigProvider, Duration, Effect, Layer, Option, Schema } from "effect"
import { HttpClientRequest } from "effect/http"
import { uniqueName } from "./utils/run.js"
import { testServer } from "./utils/server.js"

/** Reads `config` from `env`, keys joined by `_` as environment variables are. */
const read = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.provideService(config, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

const geo = Config.nested(ProviderHttpClient.config, "GEO")

describe("ProviderHttpClient.config", () => {
  it.effect("reads every key, durations and booleans included", () =>
    Effect.gen(function*() {
      const options = yield* read(geo, {
        GEO_BASE_URL: "https://geo.example.com/v1",
        GEO_USER_AGENT: "app/1.0 (ops@example.com)",
        GEO_MAX_BODY_SIZE: "1024",
        GEO_RETRY_AFTER_MAX: "1 minute",
        GEO_STREAM_IDLE_TIMEOUT: "5 seconds",
        GEO_PRECONNECT: "true",
        GEO_SCHEDULER: "caller"
      })
      assert.include(options, {
        baseUrl: "https://geo.example.com/v1",
        userAgent: "app/1.0 (ops@example.com)",
        maxBodySize: 1024,
        preconnect: true,
        scheduler: "caller"
      })
      assert.strictEqual(Duration.toMillis(options.retryAfter!.max as Duration.Duration), 60_000)
      assert.strictEqual(Duration.toMillis(options.streamIdleTimeout as Duration.Duration), 5_000)
    }))

  it.effect("a section set in part is an error naming the missing key, even under Config.option", () =>
    Effect.gen(function*() {
      const env = { GEO_USER_AGENT: "app/1.0", GEO_PRECONNECT: "true" }
      const error = yield* Effect.flip(read(Config.option(geo), env))
      assert.strictEqual(
        String(error),
        `ConfigError(SchemaError(BASE_URL is missing while USER_AGENT, PRECONNECT are set: an http client is configured whole or not at all\n  at ["GEO"]["BASE_URL"]))`
      )
      // wholly absent: not configured
      assert.deepStrictEqual(yield* read(Config.option(geo), { OTHER_BASE_URL: "http://x" }), Option.none())
    }))

  it.effect("a negative or unreadable duration, a bad size or scheme, is an error naming the key and the value", () =>
    Effect.gen(function*() {
      const refused = (env: Record<string, string>) =>
        Effect.map(Effect.flip(read(geo, { GEO_BASE_URL: "http://127.0.0.1:1", ...env })), String)
      assert.strictEqual(
        yield* refused({ GEO_STREAM_IDLE_TIMEOUT: "-5 seconds" }),
        `ConfigError(SchemaError(STREAM_IDLE_TIMEOUT must be a finite duration > 0, got "-5 seconds"\n  at ["GEO"]["STREAM_IDLE_TIMEOUT"]))`
      )
      assert.strictEqual(
        yield* refused({ GEO_RETRY_AFTER_FALLBACK: "soon" }),
        `ConfigError(SchemaError(RETRY_AFTER_FALLBACK must be a finite duration ≥ 0, got "soon"\n  at ["GEO"]["RETRY_AFTER_FALLBACK"]))`
      )
      assert.strictEqual(
        yield* refused({ GEO_MAX_BODY_SIZE: "0" }),
        `ConfigError(SchemaError(MAX_BODY_SIZE must be an integer ≥ 1, got "0"\n  at ["GEO"]["MAX_BODY_SIZE"]))`
      )
      assert.strictEqual(
        yield* refused({ GEO_BASE_URL: "mailto:x" }),
        `ConfigError(SchemaError(BASE_URL must be an absolute http(s) URL, got "mailto:x" (its scheme is mailto:)\n  at ["GEO"]["BASE_URL"]))`
      )
      assert.strictEqual(
        yield* refused({ GEO_RETRY_AFTER_MIN: "2 seconds", GEO_RETRY_AFTER_MAX: "1 second" }),
        `ConfigError(SchemaError(RETRY_AFTER_MIN must not exceed RETRY_AFTER_MAX, got 2000 ms > 1000 ms\n  at ["GEO"]["RETRY_AFTER_MIN"]))`
      )
    }))
})

describe("ProviderHttpClient.config and the options decode through one schema", () => {
  it.effect("strict text, and a rule of the options (min ≤ max with the defaults) holds in Config too", () =>
    Effect.gen(function*() {
      const refused = (env: Record<string, string>) =>
        Effect.map(Effect.flip(read(geo, { GEO_BASE_URL: "http://127.0.0.1:1", ...env })), String)
      assert.include(
        yield* refused({ GEO_MAX_BODY_SIZE: "12abc" }),
        `MAX_BODY_SIZE must be an integer ≥ 1, got "12abc"`
      )
      assert.include(yield* refused({ GEO_PRECONNECT: "maybe" }), `PRECONNECT must be true or false, got "maybe"`)
      // the default max is 5 minutes: a min above it is refused as the option is
      assert.include(
        yield* refused({ GEO_RETRY_AFTER_MIN: "10 minutes" }),
        `RETRY_AFTER_MIN must not exceed RETRY_AFTER_MAX, got 600000 ms > 300000 ms`
      )
    }))
})

describe("Tag.layerConfig", () => {
  it.live("builds the client from Config over its provider, whose stats it reaches", () =>
    Effect.gen(function*() {
      const server = yield* testServer({ "/echo": (req, res) => res.end(JSON.stringify(req.headers)) })
      const id = uniqueName("geo")
      class Geo extends Provider.Tag(id)<Geo>() {}
      class GeoHttp extends ProviderHttpClient.Tag(id)<GeoHttp>() {}
      const Live = GeoHttp.layerConfig(Geo, geo).pipe(
        Layer.provideMerge(Geo.layer({ bulkhead: { permits: 1 } })),
        Layer.provide(HttpPool.layerWithUnboundedHttpClient()),
        Layer.provide(RateLimiterStore.layerMemory),
        Layer.provide(Layer.succeed(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { GEO_BASE_URL: server.url, GEO_USER_AGENT: "geo-test/1.0" } })
        ))
      )
      yield* Effect.gen(function*() {
        const http = yield* GeoHttp
        const headers = yield* http.json(
          HttpClientRequest.get("/echo"),
          Schema.Record(Schema.String, Schema.String)
        )
        assert.strictEqual(headers["user-agent"], "geo-test/1.0")
        // one provider: the client's and the tag's are the same
        assert.strictEqual(http.provider, yield* Geo)
        assert.include(yield* http.provider.stats, { calls: 1 })
      }).pipe(Effect.provide(Live))
    }).pipe(Effect.scoped))
})
