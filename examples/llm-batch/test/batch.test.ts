/**
 * End to end on loopback, the stand-in in its own process and the CLI in another, as a user runs
 * them: with the client's quotas those of the stand-in, the stand-in answers no 429 and its busiest
 * window per dimension (counted server-side, on actual usage, by arrival) stays within
 * `limit + burst`; with estimates that fall short, the debt is charged when each call settles and
 * the calls after it pay it, so the server's windows stay within the documented bound and still no
 * 429.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Run from "../src/Run.js"
import * as Child from "../src/stand-in/Child.js"
import type * as StandIn from "../src/stand-in/StandIn.js"
import { jsonOf, MAX_TOKENS, quotaArgs, QUOTAS, runCli, testEntry } from "./utils.js"

// A `--json` run with the test quotas against the stand-in, expected to end with no failed call and
// no 429 on either side; the client's figures and the server's stats are for the test to judge.
const runClean = (standIn: StandIn.StandIn, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ran = yield* Effect.promise(() => runCli(["--url", `${standIn.url}/v1`, ...quotaArgs(), ...args, "--json"]))
    expect(ran.code, ran.stderr).toBe(0)
    const { figures } = jsonOf(ran)
    expect(figures.failed).toBe(0)
    expect(figures.tooManyRequests).toBe(0)
    const server = yield* standIn.stats
    expect(server.rateLimited).toBe(0)
    return { figures, server }
  })

describe("a batch against the stand-in", () => {
  it.live(
    "quotas that match the stand-in's: no 429, every server window within limit + burst",
    () =>
      Effect.gen(function*() {
        const standIn = yield* Child.start(testEntry, Run.standInOptions({ quotas: QUOTAS, seed: 7 }))
        const { figures, server } = yield* runClean(standIn, ["--prompts", "60"])
        expect(server.answered).toBe(60)
        expect(server.requests.busiest).toBeLessThanOrEqual(QUOTAS.requests.limit + QUOTAS.requests.burst)
        expect(server.tokens.busiest).toBeLessThanOrEqual(QUOTAS.tokens.limit + QUOTAS.tokens.burst)
        // prompt + max_tokens never falls short: nothing was owed
        expect(figures.estimate.short).toBe(0)
        expect(figures.binding.dimension).toBe("tokens")
      }).pipe(Effect.scoped),
    240_000
  )

  it.live(
    "Anthropic's messages through the middleware: no 429, every server window within limit + burst",
    () =>
      Effect.gen(function*() {
        const standIn = yield* Child.start(testEntry, Run.standInOptions({ quotas: QUOTAS, seed: 7 }))
        const { figures, server } = yield* runClean(standIn, [
          "--api",
          "anthropic",
          "--model",
          "claude-haiku-4-5",
          "--prompts",
          "40"
        ])
        expect(server.answered).toBe(40)
        expect(server.tokens.busiest).toBeLessThanOrEqual(QUOTAS.tokens.limit + QUOTAS.tokens.burst)
        // each call's estimate (prompt + max_tokens, about 45 % over) was settled with the usage
        // Anthropic's answer reported: tokens ran near the quota, where unsettled estimates hold ~70 %
        expect(figures.dimensions[1].share).toBeGreaterThan(0.8)
      }).pipe(Effect.scoped),
    240_000
  )

  it.live(
    "estimates that fall short: the debt is paid by later calls, within the bound, no 429",
    () =>
      Effect.gen(function*() {
        const permits = 4
        const expectedCompletion = 40
        // The bound: a window holds at most limit + burst + the under-estimate of the calls still in
        // flight when it ends (their debt is not in the schedule yet), at most permits × the largest
        // under-estimate of one call. The stand-in admits exactly that much more than the client's burst.
        const bound = permits * (MAX_TOKENS - expectedCompletion)
        const server = { ...QUOTAS, tokens: { ...QUOTAS.tokens, burst: QUOTAS.tokens.burst + bound } }
        const standIn = yield* Child.start(testEntry, Run.standInOptions({ quotas: server, seed: 7 }))
        const { figures, server: stats } = yield* runClean(standIn, [
          "--prompts",
          "60",
          "--permits",
          String(permits),
          "--expected-completion",
          String(expectedCompletion)
        ])
        // most calls used more than reserved; unpaid, the debt would pass the bound in every window
        expect(figures.estimate.short).toBeGreaterThan(30)
        expect((figures.estimate.shortfall * QUOTAS.windowMillis) / figures.elapsedMillis).toBeGreaterThan(bound)
        expect(stats.tokens.busiest).toBeLessThanOrEqual(QUOTAS.tokens.limit + QUOTAS.tokens.burst + bound)
        // paid: the actual usage ran at the quota's pace, not at the estimates' (about twice it)
        expect(figures.dimensions[1].share).toBeLessThan(1.1)
      }).pipe(Effect.scoped),
    240_000
  )
})
