/**
 * `--redis URL` across processes: a real redis-server, one stand-in, and two CLI runs at once, each
 * with the stand-in's full quotas. Alone, each would fill them; sharing every dimension through
 * Redis, together they never exceed them: the stand-in (which counts server-side, on actual usage)
 * answers no 429 and sees at most `limit + burst` in any window of each dimension.
 */
import { describe, expect, it } from "@effect/vitest"
import { startRedisServer } from "@sluice/test-utils/redisServer"
import * as Effect from "effect/Effect"
import * as Run from "../src/Run.js"
import * as Child from "../src/stand-in/Child.js"
import { jsonOf, quotaArgs, QUOTAS, runCli, testEntry } from "./utils.js"

describe("--redis across two processes", () => {
  it.live(
    "two runs share requests and tokens: no 429, no server window over limit + burst",
    () =>
      Effect.gen(function*() {
        const redis = yield* Effect.acquireRelease(
          Effect.promise(() => startRedisServer()),
          (server) => Effect.promise(() => server.stop())
        )
        const standIn = yield* Child.start(testEntry, Run.standInOptions({ quotas: QUOTAS, seed: 7 }))
        const args = (seed: number) => [
          "--url",
          `${standIn.url}/v1`,
          ...quotaArgs(),
          "--prompts",
          "40",
          "--seed",
          String(seed),
          // two processes on two busy cores: their starts reach the server later by what each one's
          // event loop stalls, so the pair stays 5 % under each quota (rate × stall of tokens a window)
          "--margin",
          "0.05",
          "--redis",
          redis.url,
          "--json"
        ]
        const runs = yield* Effect.all([1, 2].map((seed) => Effect.promise(() => runCli(args(seed)))), {
          concurrency: "unbounded"
        })
        for (const ran of runs) {
          expect(ran.code, ran.stderr).toBe(0)
          expect(jsonOf(ran).figures.tooManyRequests).toBe(0)
          expect(jsonOf(ran).figures.failed).toBe(0)
        }
        const stats = yield* standIn.stats
        expect(stats.answered).toBe(80)
        expect(stats.rateLimited).toBe(0)
        expect(stats.requests.busiest).toBeLessThanOrEqual(QUOTAS.requests.limit + QUOTAS.requests.burst)
        expect(stats.tokens.busiest).toBeLessThanOrEqual(QUOTAS.tokens.limit + QUOTAS.tokens.burst)
      }).pipe(Effect.scoped),
    300_000
  )
})
