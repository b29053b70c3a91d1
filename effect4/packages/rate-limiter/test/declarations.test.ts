/**
 * A library built on the rate limiter emits declarations that name our types. Those declarations
 * must only point at paths the package exports: `./internal/*` is blocked, so a `.d.ts` importing
 * `@sluice/rate-limiter/internal/...` breaks the library's own users with TS2307.
 *
 * The check itself is the Effect 3 line's: test-utils/src/declarations.ts, run here on the 2.x package.
 */
import { describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterError, RateLimiterStore } from "@sluice/rate-limiter"
import * as path from "node:path"
// the root workspace's check, by path: it is Effect-free (node:* and typescript only), and one
// copy serves both lines
import { consumerDeclarations } from "../../../../test-utils/src/declarations.js"

const packageDir = path.resolve(import.meta.dirname, "..")

/** Every way a consumer's exported types come to name a rate-limiter type by inference. */
const consumerSource = `
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Duration, Effect } from "effect"

export const asExceeded = (e: unknown) => (e instanceof RateLimiter.RateLimitExceeded ? e : undefined)
export const asStoreError = (e: unknown) => (e instanceof RateLimiterStore.RateLimiterStoreError ? e : undefined)
export const asError = (e: unknown) => (RateLimiter.isRateLimiterError(e) ? e : undefined)
export const exceeded = new RateLimiter.RateLimitExceeded({
  limiter: "geocoder", reason: "paused", retryAfter: Duration.zero, limit: undefined, cost: 1, maxWait: Duration.zero
})
export const storeError = new RateLimiterStore.RateLimiterStoreError({ message: "down" })
export const failure = (limiter: RateLimiter.RateLimiter) => Effect.flip(limiter.take())
export const pauseFailure = (limiter: RateLimiter.RateLimiter) => Effect.flip(limiter.pauseFor("1 second"))
export const caught = (limiter: RateLimiter.RateLimiter) =>
  limiter.run(Effect.succeed(1)).pipe(Effect.catchTag("RateLimitExceeded", (e) => Effect.succeed(e)))
export const caughtStore = (limiter: RateLimiter.RateLimiter) =>
  limiter.take().pipe(Effect.catchTag("RateLimiterStoreError", (e) => Effect.succeed(e)))
export const limited = (limiter: RateLimiter.RateLimiter) => Effect.succeed(1).pipe(RateLimiter.withRateLimiter(limiter))
export const made = RateLimiter.make({ name: "geocoder", limit: 2, window: "1 second" })
export const memory = RateLimiterStore.makeMemory
export const reserve = (store: RateLimiterStore.Service) =>
  store.reserve({ key: "k", limits: [], cost: 1, maxWaitMillis: 0 })
export class Geocoder extends RateLimiter.Tag("geocoder")<Geocoder>() {}
export const layer = Geocoder.layer({ limit: 2, window: "1 second" })
export const layerConfig = Geocoder.layerConfig(RateLimiter.config)
export const storeLayer = RateLimiterStore.layerMemory
export const metrics = [RateLimiter.waitSeconds, RateLimiter.rejectedTotal, RateLimiter.timerLatenessSeconds] as const
`

/** The user of the consumer library: it only type-checks if the library's declarations resolve. */
const userSource = `
import { asExceeded, asStoreError, caught, caughtStore, exceeded, failure, Geocoder, made, storeError } from "consumer"

type IsAny<T> = 0 extends 1 & T ? true : false
// an import the library's declarations cannot resolve would turn these into \`any\`
export const retryAfter = (e: unknown) => asExceeded(e)?.retryAfter
export const storeMessage = (e: unknown) => asStoreError(e)?.message
const typed: [
  IsAny<ReturnType<typeof asExceeded>>,
  IsAny<ReturnType<typeof retryAfter>>,
  IsAny<ReturnType<typeof asStoreError>>,
  IsAny<typeof exceeded>,
  IsAny<typeof storeError>
] = [false, false, false, false, false]
export const tag: "RateLimitExceeded" = exceeded._tag
export const storeTag: "RateLimiterStoreError" = storeError._tag
export { caught, caughtStore, failure, Geocoder, made, typed }
`

describe("declarations", () => {
  it("the old names are the public module's classes, values and instances alike", () => {
    expect(RateLimiter.RateLimitExceeded).toBe(RateLimiterError.RateLimitExceeded)
    expect(RateLimiterStore.RateLimiterStoreError).toBe(RateLimiterError.RateLimiterStoreError)
    const error: RateLimiter.RateLimiterError = new RateLimiterStore.RateLimiterStoreError({ message: "down" })
    expect(error).toBeInstanceOf(RateLimiterError.RateLimiterStoreError)
    expect(RateLimiter.isRateLimiterError(error)).toBe(true)
    expect(RateLimiterError.isRateLimiterError(error)).toBe(true)
    // the test beside it compiles synchronously in this worker, which holds up this one's timer
  }, 120_000)

  it("a consumer's emitted declarations name only exported paths, and its own users compile", () => {
    const result = consumerDeclarations({ packageDir, consumerSource, userSource })
    expect(result.consumerDiagnostics).toEqual([])
    expect(result.dts).toContain("asExceeded")
    expect(result.internalImports).toEqual([])
    expect(result.userDiagnostics).toEqual([])
  }, 120_000)
})
