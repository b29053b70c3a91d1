/**
 * Options that cannot work are refused when the pool or the client is built, with the option and
 * the value named.
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Cause, Duration, Effect, Exit } from "effect"
import { readFileSync } from "node:fs"
import { run, uniqueName } from "./utils/run.js"

/** The message of the defect `effect` dies with. */
const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    assert(Exit.isFailure(exit), "expected a defect")
    const defect = Cause.squash(exit.cause)
    assert(defect instanceof Cause.IllegalArgumentError, `not an IllegalArgumentError: ${String(defect)}`)
    return defect.message
  })

describe("HttpPool", () => {
  it.effect("a duration that is not one, or negative, is refused naming the option and the value", () =>
    Effect.gen(function*() {
      const refused = (options: HttpPool.Options) => defectOf(Effect.scoped(HttpPool.make(options)))
      assert.strictEqual(
        yield* refused({ keepAliveTimeout: "garbage" as Duration.Input }),
        `HttpPool: keepAliveTimeout must be a finite duration > 0, got "garbage"`
      )
      assert.strictEqual(
        yield* refused({ connectTimeout: "-5 seconds" }),
        `HttpPool: connectTimeout must be a finite duration > 0, got "-5 seconds"`
      )
      assert.strictEqual(
        yield* refused({ connectTimeout: [-1, 0] }),
        "HttpPool: connectTimeout must be a finite duration > 0, got [-1, 0]"
      )
      assert.strictEqual(
        yield* refused({ keepAliveTimeout: Number.NaN }),
        "HttpPool: keepAliveTimeout must be a finite duration > 0, got NaN"
      )
    }))

  it.effect("a connectionsPerOrigin key that is not an http(s) origin is refused naming it", () =>
    Effect.gen(function*() {
      const message = yield* defectOf(Effect.scoped(HttpPool.make({ connectionsPerOrigin: { "ftp://x": 2 } })))
      assert.strictEqual(
        message,
        `HttpPool: a connectionsPerOrigin key must be an absolute http(s) URL, got "ftp://x" (its scheme is ftp:)`
      )
    }))
})

describe("ProviderHttpClient", () => {
  const refused = (options: ProviderHttpClient.Options) =>
    run(Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("options"), bulkhead: { permits: 1 } })
      const message = yield* defectOf(ProviderHttpClient.make(provider, options))
      return message.replace(`http client of provider "${provider.name}": `, "")
    }))

  it.effect("a baseUrl without an http(s) origin is refused naming the value and what is wrong", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* refused({ baseUrl: "mailto:x" }),
        `baseUrl must be an absolute http(s) URL, got "mailto:x" (its scheme is mailto:)`
      )
      assert.strictEqual(
        yield* refused({ baseUrl: "/search" }),
        `baseUrl must be an absolute http(s) URL, got "/search" (not an absolute URL)`
      )
    }))

  it.effect("sizes and durations are refused naming the option and the value", () =>
    Effect.gen(function*() {
      const baseUrl = "http://127.0.0.1:1"
      assert.strictEqual(
        yield* refused({ baseUrl, streamIdleTimeout: "garbage" as Duration.Input }),
        `streamIdleTimeout must be a finite duration > 0, got "garbage"`
      )
      assert.strictEqual(
        yield* refused({ baseUrl, retryAfter: { fallback: "-1 millis" } }),
        `retryAfter.fallback must be a finite duration ≥ 0, got "-1 millis"`
      )
      assert.strictEqual(
        yield* refused({ baseUrl, maxBodySize: Number.NaN }),
        "maxBodySize must be an integer ≥ 1, got NaN"
      )
      assert.strictEqual(
        yield* refused({ baseUrl, retryAfter: { min: "2 seconds", max: "1 second" } }),
        "retryAfter.min must not exceed retryAfter.max, got 2000 ms > 1000 ms"
      )
    }))

  it.effect("a scheduler other than the two is refused naming the value", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* refused({ baseUrl: "http://127.0.0.1:1", scheduler: "microtask" as "caller" }),
        `scheduler must be one of "check-phase", "caller", got "microtask"`
      )
    }))
})

it("Retry-After parsing imports nothing from Effect", () => {
  const source = readFileSync(new URL("../../../../core/src/RetryAfter.ts", import.meta.url), "utf8")
  assert.notMatch(source, /\bfrom\s+["']|\bimport\s*\(|\brequire\s*\(/)
  // and the public wrapper gives the same pause as a Duration
  const bounds = { fallbackMillis: 1_000, minMillis: 100, maxMillis: 60_000 }
  assert.isTrue(Duration.equals(ProviderHttpClient.parseRetryAfter("3", 0, bounds), Duration.seconds(3)))
})
