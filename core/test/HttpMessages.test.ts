/**
 * The HTTP middleware's judgements on plain values: which failures never reached the upstream,
 * what a cost a limiter can charge is, and how sizes, durations and bodies read in its sentences.
 */
import { assert, describe, it } from "vitest"
import * as HttpMessages from "../src/HttpMessages.js"

describe("HttpMessages", () => {
  it("an http(s) URL has an origin to pool on; anything else says why not", () => {
    assert.isUndefined(HttpMessages.notHttpUrl("https://api.example.com/v1"))
    assert.isUndefined(HttpMessages.notHttpUrl("http://127.0.0.1:8080"))
    assert.strictEqual(HttpMessages.notHttpUrl("mailto:ops@example.com"), "its scheme is mailto:")
    assert.strictEqual(HttpMessages.notHttpUrl("/v1/chat"), "not an absolute URL")
    assert.strictEqual(HttpMessages.notHttpUrl(42), "not a string")
  })

  it("a connection that did not open says why, an empty AggregateError by its first error or code", () => {
    assert.strictEqual(
      HttpMessages.connectFailure(new Error("connect ECONNREFUSED 127.0.0.1:9")),
      "connect ECONNREFUSED 127.0.0.1:9"
    )
    const both = Object.assign(new AggregateError([new Error("connect ECONNREFUSED ::1:9")], ""), {
      code: "ECONNREFUSED"
    })
    assert.strictEqual(HttpMessages.connectFailure(both), "connect ECONNREFUSED ::1:9")
    const bare = Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" })
    assert.strictEqual(HttpMessages.connectFailure(bare), "ECONNREFUSED")
  })

  it("a failure never reached the upstream when the URL or body was refused, or the connection never opened", () => {
    assert.isTrue(HttpMessages.neverSent("InvalidUrl", undefined))
    assert.isTrue(HttpMessages.neverSent("Encode", new Error("cyclic")))
    assert.isTrue(HttpMessages.neverSent("Transport", { code: "ECONNREFUSED" }))
    // undici wraps the socket's error: the code is on the cause's cause
    assert.isTrue(HttpMessages.neverSent("Transport", { cause: { code: "UND_ERR_CONNECT_TIMEOUT" } }))
    assert.isFalse(HttpMessages.neverSent("Transport", { code: "ECONNRESET" }))
    assert.isFalse(HttpMessages.neverSent("Transport", new Error("socket hang up")))
    assert.isFalse(HttpMessages.neverSent("StatusCode", { code: "ECONNREFUSED" }))
  })

  it("a cost is an integer of at least min, or units by dimension on the limiter's dimensions", () => {
    const dimensions = new Set(["tokens", "requests"])
    assert.isUndefined(HttpMessages.junkCost(1, 1, dimensions))
    assert.isUndefined(HttpMessages.junkCost({ tokens: 0 }, 1, dimensions))
    assert.strictEqual(HttpMessages.junkCost(0, 1, dimensions), "not an integer ≥ 1")
    assert.strictEqual(HttpMessages.junkCost(1.5, 0, undefined), "not an integer ≥ 0")
    assert.strictEqual(HttpMessages.junkCost("3", 1, dimensions), "neither a number nor units by dimension")
    assert.strictEqual(HttpMessages.junkCost({}, 1, dimensions), "no dimension")
    assert.strictEqual(HttpMessages.junkCost({ tokens: -1 }, 1, dimensions), "tokens is not an integer ≥ 0")
    assert.strictEqual(
      HttpMessages.junkCost({ bytes: 1 }, 1, dimensions),
      "the limiter has no dimension bytes (it has tokens, requests)"
    )
  })

  it("sizes, bodies and values read as the warnings and errors write them", () => {
    assert.deepStrictEqual([0, 1023, 1536, 2 * 1024 * 1024].map(HttpMessages.formatBytes), [
      "0 B",
      "1023 B",
      "1.5 KiB",
      "2.0 MiB"
    ])
    assert.deepStrictEqual([undefined, "abc", new Uint8Array(4), { a: 1 }].map(HttpMessages.describeBody), [
      "none",
      "text of 3 characters",
      "4 bytes",
      "parsed JSON"
    ])
    assert.strictEqual(HttpMessages.show({ tokens: "7", extra: undefined }), `{ tokens: "7", extra: undefined }`)
    assert.strictEqual(
      HttpMessages.upstreamRateLimited({
        provider: "geo",
        status: 429,
        url: "http://127.0.0.1/x",
        retryAfterNanos: 2_500_000_000n,
        retryAfterHeader: undefined
      }),
      `provider "geo" answered 429 to http://127.0.0.1/x; paused the provider for 2s 500ms (Retry-After: absent)`
    )
    assert.strictEqual(
      HttpMessages.streamIdleTimeout({ provider: "llm", url: "u", idleTimeoutNanos: 0n, received: 2048 }),
      `provider "llm" sent nothing for 0 on the stream from u (2.0 KiB received); the request was aborted`
    )
    assert.strictEqual(
      HttpMessages.upstreamStatus({ provider: "geo", status: 503, url: "u", body: "x".repeat(300) }),
      `provider "geo" answered 503 to u: ${"x".repeat(200)}`
    )
  })
})
