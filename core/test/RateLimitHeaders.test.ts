/**
 * The header values the profiles read, on the examples of their specifications (Go's
 * `time.ParseDuration`, RFC 3339), and the generic profile's reset rule.
 */
import { assert, describe, it } from "vitest"
import * as values from "../src/internal/rateLimitHeaders/headerValues.js"
import * as RateLimitHeaders from "../src/RateLimitHeaders.js"

const at = (iso: string) => Date.parse(iso)

describe("Go durations (OpenAI's resets)", () => {
  it("reads every unit and compound durations, not just the first number", () => {
    // Go's time.ParseDuration documentation: "such as "300ms", "-1.5h" or "2h45m""; its example
    // parses "10h", "1h10m10s", "1µs" and "1us"
    assert.strictEqual(values.parseGoDuration("300ms"), 300)
    assert.strictEqual(values.parseGoDuration("-1.5h"), -5_400_000)
    assert.strictEqual(values.parseGoDuration("2h45m"), 9_900_000)
    assert.strictEqual(values.parseGoDuration("10h"), 36_000_000)
    assert.strictEqual(values.parseGoDuration("1h10m10s"), 4_210_000)
    assert.strictEqual(values.parseGoDuration("1\u00b5s"), 0.001)
    assert.strictEqual(values.parseGoDuration("1us"), 0.001)
    // the shapes OpenAI sends (its guide: 1s, 6m0s; real responses: 12ms, 9ms) and fractions
    assert.strictEqual(values.parseGoDuration("1s"), 1_000)
    assert.strictEqual(values.parseGoDuration("6m0s"), 360_000)
    assert.strictEqual(values.parseGoDuration("20ms"), 20)
    assert.strictEqual(values.parseGoDuration("1h2m3.5s"), 3_723_500)
    assert.strictEqual(values.parseGoDuration("0.5s"), 500)
    assert.strictEqual(values.parseGoDuration("0.3s"), 300) // not 300.00000000000006
    assert.strictEqual(values.parseGoDuration("1.s"), 1_000) // Go accepts an empty fraction
    assert.strictEqual(values.parseGoDuration("0"), 0) // the one duration without a unit
    assert.strictEqual(values.parseGoDuration("1500ns"), 0.0015)
  })

  it("refuses what Go refuses (constructed malformed values)", () => {
    for (const bad of ["", "6", "6m0", "1d", ".s", "s", "6 m", "1h 2m", "abc", "--1s", "1e3s", "0x10s"]) {
      assert.strictEqual(values.parseGoDuration(bad), undefined, JSON.stringify(bad))
    }
  })
})

describe("RFC 3339 instants (Anthropic's resets)", () => {
  it("reads the examples of RFC 3339 §5.8", () => {
    assert.strictEqual(values.parseRfc3339("1985-04-12T23:20:50.52Z"), at("1985-04-12T23:20:50.520Z"))
    assert.strictEqual(values.parseRfc3339("1996-12-19T16:39:57-08:00"), at("1996-12-20T00:39:57Z"))
    // a leap second: the instant after 23:59:59 (JavaScript time has no leap seconds)
    assert.strictEqual(values.parseRfc3339("1990-12-31T23:59:60Z"), at("1991-01-01T00:00:00Z"))
    assert.strictEqual(values.parseRfc3339("1937-01-01T12:00:27.87+00:20"), at("1937-01-01T11:40:27.870Z"))
  })

  it("refuses what is not RFC 3339, though Date.parse reads some of it (constructed malformed values)", () => {
    for (
      const bad of [
        "2025-08-21 12:40:59", // no offset
        "Thu, 21 Aug 2025 12:41:00 GMT", // an HTTP date
        "2025-08-21",
        "2025-02-30T00:00:00Z", // no such day
        "2025-13-01T00:00:00Z",
        "2025-08-21T24:00:00Z",
        "2025-08-21T12:40:59+25:00",
        "1755780059"
      ]
    ) {
      assert.strictEqual(values.parseRfc3339(bad), undefined, bad)
    }
  })
})
describe("RateLimitHeaders.genericResetMillis", () => {
  it("recognises epoch milliseconds by size, and an epoch already past is 0 (constructed values)", () => {
    const now = at("2026-01-01T00:00:00Z")
    assert.strictEqual(RateLimitHeaders.genericResetMillis(String(now + 1_500), now), 1_500)
    assert.strictEqual(RateLimitHeaders.genericResetMillis(String(now / 1000 - 10), now), 0)
    assert.strictEqual(RateLimitHeaders.genericResetMillis("999999999", now), 999_999_999_000) // below 10^9: delta seconds
    assert.strictEqual(RateLimitHeaders.genericResetMillis("1.5", now), 1_500)
  })
})
