// A library built on sluice, as a user would publish one: the declarations tsc emits for it name
// sluice's types where they are declared, which must be public modules (the consumer test fails on
// an internal path; a second project, lib-user, compiles against those declarations).
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"

/** The permit-wait timeout among a call's failures, narrowed with `instanceof`. */
export const permitWaitTimeout = <E>(error: E) => error instanceof Bulkhead.PermitWaitTimeout ? error : undefined

/** The same for the bulkhead's queue being full. */
export const bulkheadFull = <E>(error: E) => error instanceof Bulkhead.BulkheadFull ? error : undefined

/** The same error through the provider's own re-export: one import gives every error of a provider. */
export const providerPermitWait = <E>(error: E) => error instanceof Provider.PermitWaitTimeout ? error : undefined

/** The attempt budget. */
export const callTimeout = <E>(error: E) => error instanceof Provider.CallTimeout ? error : undefined

/** The limiter's refusal. */
export const rateLimited = <E>(error: E) => error instanceof RateLimiter.RateLimitExceeded ? error : undefined

/** The limiter's store failing to decide (Redis down). */
export const storeFailed = <E>(error: E) => error instanceof RateLimiterStore.RateLimiterStoreError ? error : undefined

/** The same through the provider's re-export. */
export const providerStoreFailed = <E>(error: E) => error instanceof Provider.RateLimiterStoreError ? error : undefined

/** A provider's settings with a library's defaults, inferred rather than annotated. */
export const withDefaults = (permits: number) => ({
  bulkhead: { permits, maxWait: "5 seconds" },
  attemptTimeout: "10 seconds"
} satisfies Provider.Settings)
