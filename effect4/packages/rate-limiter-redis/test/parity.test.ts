/**
 * Message parity: the same store options refused with the same sentences on both lines, and the
 * same `RateLimiterStoreError` text (`message` and `String(error)`) from a store that fails
 * closed, compared byte for byte. The Effect 3 line runs in a child process (`parity/effect3.mjs`,
 * with the root's tsx), as it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { Cause, Effect, Exit, Logger } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { requests, storeOptions, unreachable } from "./parity/cases.js"

interface Shown {
  readonly message: string
  readonly string: string
}

/** The store's log lines, compared too. */
const logs: Array<string> = []
const capturing = Logger.layer([
  Logger.make(({ message }) => {
    logs.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
])

const refusal = async (options: Record<string, unknown>): Promise<string | null> => {
  const exit = await Effect.runPromiseExit(
    Effect.scoped(RedisRateLimiterStore.make(options as RedisRateLimiterStore.Options)).pipe(
      Effect.provide(capturing)
    )
  )
  return Exit.isSuccess(exit) ? null : String((Cause.squash(exit.cause) as Error).message)
}

const failures = Effect.scoped(Effect.gen(function*() {
  const store = yield* RedisRateLimiterStore.make(unreachable)
  const shown = (error: RateLimiterStore.RateLimiterStoreError): Shown => ({
    message: error.message,
    string: String(error)
  })
  return [
    shown(yield* Effect.flip(store.reserve(requests))),
    shown(yield* Effect.flip(store.pause(requests.key, 1000))),
    shown(yield* Effect.flip(store.readPause(requests.key)))
  ]
})).pipe(Effect.provide(capturing))

const effect3 = async (): Promise<{
  options: Array<string | null>
  failures: Array<Shown>
  logs: Array<string>
}> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 Redis rate limiter stores refuse and fail alike", () => {
  it("for every case of the table: options refused, errors of a store failing closed", async () => {
    const theirs = await effect3()
    const options: Array<string | null> = []
    for (const o of storeOptions) options.push(await refusal(o))
    const ours = { options, failures: await Effect.runPromise(failures), logs }
    assert.deepStrictEqual(ours, theirs)
    // the store that cannot connect says once that it is degraded
    assert.strictEqual(ours.logs.length, 1)
    assert.match(ours.logs[0], /^Redis rate limiter store "parity:" is degraded \(/)
    // every case is refused, naming the store, and each failure leads with its tag
    for (const reason of ours.options) assert.match(reason ?? "accepted", /^Redis rate limiter store: /)
    assert.strictEqual(new Set(ours.options).size, ours.options.length, "each case refused for its own reason")
    for (const { message, string } of ours.failures) {
      assert.match(string, /^RateLimiterStoreError: Redis rate limiter store "parity:": /)
      assert.include(message, `(limiter "geo" fails closed while Redis is unreachable)`)
      // which Redis, and why it is unreachable (both lines: the JSON above is equal)
      assert.match(
        message,
        /no connection to Redis at 127\.0\.0\.1:1 \(last error: connect ECONNREFUSED 127\.0\.0\.1:1; /
      )
    }
  }, 60_000)
})
