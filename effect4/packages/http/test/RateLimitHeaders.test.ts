/**
 * Header profiles, on header samples copied from the providers' documentation (the source is named
 * next to each) and from recorded real responses where the documentation gives names but no values.
 * Malformed values are ones seen in the wild where a source is named, constructed otherwise (said so).
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimitHeaders } from "@sluice/http"
import { Duration, Effect } from "effect"
import { Headers } from "effect/http"
import { TestClock } from "effect/testing"

const at = (iso: string) => Date.parse(iso)

describe("RateLimitHeaders.openai", () => {
  it("reads the sample of OpenAI's Rate limits guide", () => {
    // OpenAI API docs, guides "Rate limits", section "Rate limits in headers", the Sample Value
    // column of its table (https://platform.openai.com/docs/guides/rate-limits)
    const headers = {
      "x-ratelimit-limit-requests": "60",
      "x-ratelimit-limit-tokens": "150000",
      "x-ratelimit-remaining-requests": "59",
      "x-ratelimit-remaining-tokens": "149984",
      "x-ratelimit-reset-requests": "1s",
      "x-ratelimit-reset-tokens": "6m0s"
    }
    assert.deepStrictEqual(RateLimitHeaders.openai.read(headers, 0), {
      observations: [
        { dimension: "requests", limit: 60, remaining: 59, resetAfterMillis: 1_000 },
        { dimension: "tokens", limit: 150_000, remaining: 149_984, resetAfterMillis: 360_000 }
      ],
      problems: []
    })
  })

  it("reads a real response with extra headers it does not know, whatever their case", () => {
    // A chat completions response quoted on the OpenAI community forum, "How to get rate limit
    // reset time for response API?" (community.openai.com/t/1268905); names re-cased here to show
    // they match in any case
    const headers = {
      "X-RateLimit-Limit-Requests": "5000",
      "x-ratelimit-limit-tokens": "160000",
      "x-ratelimit-limit-tokens_usage_based": "160000",
      "x-ratelimit-remaining-requests": "4999",
      "X-Ratelimit-Remaining-Tokens": "159976",
      "x-ratelimit-remaining-tokens_usage_based": "159976",
      "x-ratelimit-reset-requests": "12ms",
      "x-ratelimit-reset-tokens": "9ms",
      "x-ratelimit-reset-tokens_usage_based": "9ms"
    }
    assert.deepStrictEqual(RateLimitHeaders.openai.read(headers, 0).observations, [
      { dimension: "requests", limit: 5000, remaining: 4999, resetAfterMillis: 12 },
      { dimension: "tokens", limit: 160_000, remaining: 159_976, resetAfterMillis: 9 }
    ])
  })

  it("ignores and reports the -1 an Azure OpenAI deployment sends", () => {
    // Reported in openai/openai-dotnet issue 838: "[x-ratelimit-limit-tokens, -1],
    // [x-ratelimit-remaining-tokens, -1], [x-ratelimit-reset-tokens, 0]"
    const reading = RateLimitHeaders.openai.read({
      "x-ratelimit-limit-tokens": "-1",
      "x-ratelimit-remaining-tokens": "-1",
      "x-ratelimit-reset-tokens": "0"
    }, 0)
    assert.deepStrictEqual(reading.observations, [{ dimension: "tokens", resetAfterMillis: 0 }])
    assert.deepStrictEqual(reading.problems, [
      { header: "x-ratelimit-limit-tokens", value: "-1", reason: "not a non-negative integer" },
      { header: "x-ratelimit-remaining-tokens", value: "-1", reason: "not a non-negative integer" }
    ])
  })

  it("ignores and reports durations that are not Go durations (constructed malformed values)", () => {
    const reading = RateLimitHeaders.openai.read({
      "x-ratelimit-remaining-requests": "59",
      "x-ratelimit-reset-requests": "6m0", // a unit missing
      "x-ratelimit-reset-tokens": "-1s"
    }, 0)
    assert.deepStrictEqual(reading.observations, [{ dimension: "requests", remaining: 59 }])
    assert.deepStrictEqual(reading.problems.map((p) => [p.header, p.value]), [
      ["x-ratelimit-reset-requests", "6m0"],
      ["x-ratelimit-reset-tokens", "-1s"]
    ])
    assert.match(reading.problems[0].reason, /Go duration/)
  })

  it("rounds a sub-millisecond reset up", () => {
    const reading = RateLimitHeaders.openai.read({ "x-ratelimit-reset-tokens": "1.2ms" }, 0)
    assert.deepStrictEqual(reading.observations, [{ dimension: "tokens", resetAfterMillis: 2 }])
  })
})

describe("RateLimitHeaders.anthropic", () => {
  // Anthropic's API docs, "Rate limits", section "Response headers", list these headers with
  // "RFC 3339 format" resets but give no sample values; these are a real api.anthropic.com response
  // recorded in tidyllm's test fixtures (tests/testthat/claude/api.anthropic.com/v1/messages-e050b5-POST.R),
  // received at its Date header, Thu, 21 Aug 2025 12:41:00 GMT
  const recorded = {
    "anthropic-ratelimit-input-tokens-limit": "80000",
    "anthropic-ratelimit-input-tokens-remaining": "80000",
    "anthropic-ratelimit-input-tokens-reset": "2025-08-21T12:40:59Z",
    "anthropic-ratelimit-output-tokens-limit": "16000",
    "anthropic-ratelimit-output-tokens-remaining": "16000",
    "anthropic-ratelimit-output-tokens-reset": "2025-08-21T12:41:00Z",
    "anthropic-ratelimit-requests-limit": "1000",
    "anthropic-ratelimit-requests-remaining": "999",
    "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z",
    "anthropic-ratelimit-tokens-limit": "96000",
    "anthropic-ratelimit-tokens-remaining": "96000",
    "anthropic-ratelimit-tokens-reset": "2025-08-21T12:40:59Z"
  }
  const received = at("2025-08-21T12:41:00Z")

  it("reads the four dimensions; a reset already past at receipt is 0", () => {
    assert.deepStrictEqual(RateLimitHeaders.anthropic.read(recorded, received), {
      observations: [
        { dimension: "requests", limit: 1000, remaining: 999, resetAfterMillis: 0 },
        { dimension: "tokens", limit: 96_000, remaining: 96_000, resetAfterMillis: 0 },
        { dimension: "input-tokens", limit: 80_000, remaining: 80_000, resetAfterMillis: 0 },
        { dimension: "output-tokens", limit: 16_000, remaining: 16_000, resetAfterMillis: 0 }
      ],
      problems: []
    })
  })

  it("turns the instant into a duration on the receiver's clock", () => {
    // the same sample, as a receiver whose clock reads 30 s earlier sees it
    const early = RateLimitHeaders.anthropic.read(recorded, received - 30_000)
    assert.deepStrictEqual(early.observations.map((o) => [o.dimension, o.resetAfterMillis]), [
      ["requests", 29_000],
      ["tokens", 29_000],
      ["input-tokens", 29_000],
      ["output-tokens", 30_000]
    ])
  })

  it("ignores and reports resets that are not RFC 3339 and counts that are not counts (constructed malformed values)", () => {
    const reading = RateLimitHeaders.anthropic.read({
      "anthropic-ratelimit-requests-limit": "1000",
      "anthropic-ratelimit-requests-reset": "Thu, 21 Aug 2025 12:41:00 GMT",
      "anthropic-ratelimit-tokens-remaining": "96k",
      "anthropic-ratelimit-tokens-reset": "2025-08-21T12:41:30+00:00"
    }, received)
    assert.deepStrictEqual(reading.observations, [
      { dimension: "requests", limit: 1000 },
      { dimension: "tokens", resetAfterMillis: 30_000 }
    ])
    assert.deepStrictEqual(reading.problems.map((p) => [p.header, p.value]), [
      ["anthropic-ratelimit-requests-reset", "Thu, 21 Aug 2025 12:41:00 GMT"],
      ["anthropic-ratelimit-tokens-remaining", "96k"]
    ])
  })

  it("rename maps the profile's dimensions to the limiter's", () => {
    const renamed = RateLimitHeaders.rename(RateLimitHeaders.anthropic, {
      "input-tokens": "input",
      "output-tokens": "output"
    })
    assert.deepStrictEqual(renamed.read(recorded, received).observations.map((o) => o.dimension), [
      "requests",
      "tokens",
      "input",
      "output"
    ])
  })
})

describe("RateLimitHeaders.ietf", () => {
  // Every example below is copied from draft-ietf-httpapi-ratelimit-headers-10 (27 September 2025),
  // the section named next to it
  const read = (headers: Record<string, string>) => RateLimitHeaders.ietf.read(headers, 0)

  it("§3 and §3.2: policies give the quota of each policy name", () => {
    assert.deepStrictEqual(read({ "RateLimit-Policy": "\"burst\";q=100;w=60,\"daily\";q=1000;w=86400" }).observations, [
      { dimension: "burst", limit: 100 },
      { dimension: "daily", limit: 1000 }
    ])
    assert.deepStrictEqual(read({ "RateLimit-Policy": "\"default\";q=100;w=10" }).observations, [
      { dimension: "default", limit: 100 }
    ])
    assert.deepStrictEqual(read({ "RateLimit-Policy": "\"permin\";q=50;w=60,\"perhr\";q=1000;w=3600" }).observations, [
      { dimension: "permin", limit: 50 },
      { dimension: "perhr", limit: 1000 }
    ])
    assert.deepStrictEqual(read({ "RateLimit-Policy": "\"peruser\";q=100;w=60;pk=:cHsdsRa894==:" }), {
      observations: [{ dimension: "peruser", limit: 100 }],
      problems: []
    })
    assert.deepStrictEqual(
      read({ "RateLimit-Policy": "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:" }).observations,
      [{ dimension: "peruser", limit: 65_535 }]
    )
  })

  it("§4.2: service limits give the remaining units and the seconds until more", () => {
    assert.deepStrictEqual(read({ RateLimit: "\"default\";r=50;t=30" }).observations, [
      { dimension: "default", remaining: 50, resetAfterMillis: 30_000 }
    ])
    assert.deepStrictEqual(read({ RateLimit: "\"default\";r=999;pk=:dHJpYWwxMjEzMjM=:" }).observations, [
      { dimension: "default", remaining: 999 }
    ])
    assert.deepStrictEqual(read({ RateLimit: "\"default\";r=300000000;t=60;pk=:QXBwLTk5OQ==:" }).observations, [
      { dimension: "default", remaining: 300_000_000, resetAfterMillis: 60_000 }
    ])
  })

  it("Appendix B: both fields joined by policy name", () => {
    // B.1.1
    assert.deepStrictEqual(read({ RateLimit: "\"default\";r=0;t=50" }).observations, [
      { dimension: "default", remaining: 0, resetAfterMillis: 50_000 }
    ])
    // B.1.3
    assert.deepStrictEqual(read({ "RateLimit-Policy": "\"basic\";q=100;w=60", RateLimit: "\"basic\";r=20;t=56" }), {
      observations: [{ dimension: "basic", limit: 100, remaining: 20, resetAfterMillis: 56_000 }],
      problems: []
    })
    // B.2.1, the fields in the other order
    assert.deepStrictEqual(
      read({ RateLimit: "\"fixedwindow\";r=99;t=50", "RateLimit-Policy": "\"fixedwindow\";q=100;w=60" }).observations,
      [{ dimension: "fixedwindow", limit: 100, remaining: 99, resetAfterMillis: 50_000 }]
    )
    // B.3.2: two policies with a space after the comma, a service limit for one of them
    assert.deepStrictEqual(
      read({ "RateLimit-Policy": "\"hour\";q=1000;w=3600, \"day\";q=5000;w=86400", RateLimit: "\"day\";r=100;t=36000" })
        .observations,
      [{ dimension: "hour", limit: 1000 }, {
        dimension: "day",
        limit: 5000,
        remaining: 100,
        resetAfterMillis: 36_000_000
      }]
    )
    // B.3.1: token policy names, and a service limit without `r`
    assert.deepStrictEqual(read({ "RateLimit-Policy": "quota;q=100;w=1", RateLimit: "quota;t=1" }), {
      observations: [{ dimension: "quota", limit: 100, resetAfterMillis: 1_000 }],
      problems: []
    })
    // FAQ 8: no space after the colon, and a policy split over two fields (joined as HTTP joins them)
    assert.deepStrictEqual(
      read({
        "RateLimit-Policy": "\"sliding\";q=100;w=60;burst=1000, \"fixed\";q=5000;w=3600;burst=0",
        RateLimit: "\"sliding\";r=50;t=44"
      }).observations,
      [{ dimension: "sliding", limit: 100, remaining: 50, resetAfterMillis: 44_000 }, {
        dimension: "fixed",
        limit: 5000
      }]
    )
  })

  it("reads a field repeated on several lines, through @effect/platform's Headers", () => {
    const headers = Headers.fromInput({ "ratelimit-policy": ["\"sliding\";q=100;w=60", "\"fixed\";q=5000;w=3600"] })
    assert.deepStrictEqual(RateLimitHeaders.ietf.read(headers, 0).observations, [
      { dimension: "sliding", limit: 100 },
      { dimension: "fixed", limit: 5000 }
    ])
  })

  it("ignores a field that is not a structured field list as a whole, and an item with a bad parameter (constructed malformed values)", () => {
    for (
      const value of [
        "\"default\";r=50;t=30,", // trailing comma
        "\"default;r=50", // unterminated string
        "(\"a\" \"b\");r=1", // an inner list
        "\"default\";R=50", // keys are lowercase
        "\"default\" ;r=50", // no space before a parameter
        "\"default\";r=50 t=30"
      ]
    ) {
      const reading = read({ RateLimit: value })
      assert.deepStrictEqual(reading.observations, [], value)
      assert.strictEqual(reading.problems.length, 1, value)
      assert.strictEqual(reading.problems[0].header, "RateLimit")
      assert.strictEqual(reading.problems[0].value, value)
      assert.match(reading.problems[0].reason, /^not a structured field list: /)
    }
    const items = read({
      "RateLimit-Policy": "\"a\";q=-5, \"b\";w=60, \"c\";q=10",
      RateLimit: "\"a\";r=1.5, \"c\";r=abc;t=3, \"d\";r=4;t=?1, 12;r=1, \"e\";r=7"
    })
    assert.deepStrictEqual(items.observations, [{ dimension: "c", limit: 10 }, { dimension: "e", remaining: 7 }])
    assert.deepStrictEqual(items.problems.map((p) => `${p.header}: ${p.reason}`), [
      "RateLimit-Policy: policy \"a\": q must be a non-negative integer",
      "RateLimit-Policy: policy \"b\": q is required",
      "RateLimit: policy \"a\": r must be a non-negative integer",
      "RateLimit: policy \"c\": r must be a non-negative integer",
      "RateLimit: policy \"d\": t must be a non-negative integer",
      "RateLimit: a policy name must be a string or a token"
    ])
  })
})

describe("RateLimitHeaders.generic", () => {
  it("reads an epoch reset, as GitHub's REST API documentation shows it", () => {
    // GitHub REST API v3 docs, "Rate limiting" (developer.github.com/v3/#rate-limiting):
    // "Date: Mon, 01 Jul 2013 17:27:06 GMT / X-RateLimit-Limit: 60 / X-RateLimit-Remaining: 56 /
    // X-RateLimit-Reset: 1372700873", received at its Date header
    const reading = RateLimitHeaders.generic.read({
      "X-RateLimit-Limit": "60",
      "X-RateLimit-Remaining": "56",
      "X-RateLimit-Reset": "1372700873"
    }, at("2013-07-01T17:27:06Z"))
    assert.deepStrictEqual(reading, {
      observations: [{ dimension: "default", limit: 60, remaining: 56, resetAfterMillis: 1_247_000 }],
      problems: []
    })
  })

  it("reads a reset in seconds, as Statbot's API documentation shows it", () => {
    // Statbot API docs, schema "RateLimitHeaders" (docs.statbot.net/docs/api/schemas/ratelimitheaders):
    // x-ratelimit-limit 10, x-ratelimit-remaining 5, x-ratelimit-reset 60 ("How many seconds until
    // the rate limit resets")
    const reading = RateLimitHeaders.generic.read({
      "x-ratelimit-limit": "10",
      "x-ratelimit-remaining": "5",
      "x-ratelimit-reset": "60"
    }, at("2026-01-01T00:00:00Z"))
    assert.deepStrictEqual(reading.observations, [{
      dimension: "default",
      limit: 10,
      remaining: 5,
      resetAfterMillis: 60_000
    }])
  })

  it("ignores and reports a reset written as a date, as lemlist's API documentation shows it", () => {
    // lemlist API docs, "Rate limits" (developer.lemlist.com/api-reference/getting-started/rate-limits):
    // "X-RateLimit-Limit": 20, "X-RateLimit-Remaining": 7, "X-RateLimit-Reset": "Tue Feb 16 2021
    // 09:02:42 GMT+0100 (Central European Standard Time)" — neither seconds nor an epoch
    const reading = RateLimitHeaders.generic.read({
      "X-RateLimit-Limit": "20",
      "X-RateLimit-Remaining": "7",
      "X-RateLimit-Reset": "Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)"
    }, 0)
    assert.deepStrictEqual(reading.observations, [{ dimension: "default", limit: 20, remaining: 7 }])
    assert.deepStrictEqual(reading.problems, [{
      header: "x-ratelimit-reset",
      value: "Tue Feb 16 2021 09:02:42 GMT+0100 (Central European Standard Time)",
      reason: "not seconds, epoch seconds or epoch milliseconds"
    }])
  })
})

describe("RateLimitHeaders.observe", () => {
  it.effect("reads at the Clock's time at receipt", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2025-08-21T12:40:00Z"))
      const reading = yield* RateLimitHeaders.observe(RateLimitHeaders.anthropic, {
        "anthropic-ratelimit-requests-remaining": "999",
        "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z"
      })
      assert.deepStrictEqual(reading.observations, [{
        dimension: "requests",
        remaining: 999,
        resetAfterMillis: 59_000
      }])
    }))
})

describe("resets are bounded", () => {
  const now = at("2025-08-21T12:40:00Z")
  const oneHour = 3_600_000

  it("every profile reads a reset beyond an hour with nothing remaining as an hour, and reports it", () => {
    // constructed values, one per profile's syntax: ten years, the end of year 9999, 10^15 seconds,
    // 10^8 seconds (below 10^9: delta seconds) and an epoch in milliseconds of year 5138
    const cases: ReadonlyArray<readonly [RateLimitHeaders.Profile, Record<string, string>, string, string]> = [
      [
        RateLimitHeaders.openai,
        {
          "x-ratelimit-remaining-tokens": "0",
          "x-ratelimit-reset-tokens": "87600h"
        },
        "x-ratelimit-reset-tokens",
        "87600h"
      ],
      [
        RateLimitHeaders.anthropic,
        {
          "anthropic-ratelimit-tokens-remaining": "0",
          "anthropic-ratelimit-tokens-reset": "9999-12-31T23:59:59Z"
        },
        "anthropic-ratelimit-tokens-reset",
        "9999-12-31T23:59:59Z"
      ],
      [
        RateLimitHeaders.ietf,
        { "RateLimit": `"tokens";r=0;t=999999999999999` },
        "RateLimit",
        `"tokens";r=0;t=999999999999999`
      ],
      [
        RateLimitHeaders.generic,
        { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "99999999" },
        "x-ratelimit-reset",
        "99999999"
      ],
      [
        RateLimitHeaders.generic,
        { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "99999999999999" },
        "x-ratelimit-reset",
        "99999999999999"
      ]
    ]
    for (const [profile, headers, header, value] of cases) {
      const reading = profile.read(headers, now)
      assert.strictEqual(reading.observations.length, 1, profile.name)
      assert.strictEqual(reading.observations[0].remaining, 0)
      assert.strictEqual(reading.observations[0].resetAfterMillis, oneHour, profile.name)
      assert.strictEqual(reading.problems.length, 1, profile.name)
      assert.strictEqual(reading.problems[0].header, header)
      assert.strictEqual(reading.problems[0].value, value)
      assert.match(reading.problems[0].reason, /beyond the maximum of 3600000 ms: read as 3600000 ms/)
    }
  })

  it("a reset with units left, or within the bound, is the server's figure", () => {
    const reading = RateLimitHeaders.openai.read({
      "x-ratelimit-remaining-requests": "9",
      "x-ratelimit-reset-requests": "23h59m",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "59m59s"
    }, now)
    assert.deepStrictEqual(reading, {
      observations: [
        { dimension: "requests", remaining: 9, resetAfterMillis: 86_340_000 },
        { dimension: "tokens", remaining: 0, resetAfterMillis: 3_599_000 }
      ],
      problems: []
    })
  })

  it("withMaxReset sets the bound, through rename too; a bound that is not a finite duration throws", () => {
    const daily = RateLimitHeaders.rename(RateLimitHeaders.withMaxReset(RateLimitHeaders.openai, "1 day"), {
      tokens: "tok"
    })
    const headers = { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6h" }
    assert.deepStrictEqual(daily.read(headers, now), {
      observations: [{ dimension: "tok", remaining: 0, resetAfterMillis: 21_600_000 }],
      problems: []
    })
    const tight = RateLimitHeaders.withMaxReset(RateLimitHeaders.openai, "1 second")
    assert.strictEqual(tight.read(headers, now).observations[0].resetAfterMillis, 1_000)
    // the bound given last wins
    assert.strictEqual(
      RateLimitHeaders.withMaxReset(tight, "2 seconds").read(headers, now).observations[0].resetAfterMillis,
      2_000
    )
    assert.strictEqual(Duration.toMillis(RateLimitHeaders.defaultMaxReset), oneHour)
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "forever"]) {
      assert.throws(
        () => RateLimitHeaders.withMaxReset(RateLimitHeaders.openai, bad as Duration.Input),
        /withMaxReset of profile "openai": maxReset must be a finite duration ≥ 0/
      )
    }
  })

  it.effect("observe bounds at the Clock's time: an instant past the bound is an hour", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now)
      const reading = yield* RateLimitHeaders.observe(RateLimitHeaders.anthropic, {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2025-08-21T14:40:00Z"
      })
      assert.deepStrictEqual(reading.observations, [{
        dimension: "requests",
        remaining: 0,
        resetAfterMillis: oneHour
      }])
      assert.strictEqual(reading.problems[0].header, "anthropic-ratelimit-requests-reset")
    }))
})
