// The library's own consumer: it sees only the declarations lib emitted (lib/dist/index.d.ts),
// compiled with the app (tsconfig.json), strict and with skipLibCheck false.
import { Duration } from "effect"
import {
  bulkheadFull,
  callTimeout,
  permitWaitTimeout,
  providerPermitWait,
  providerStoreFailed,
  rateLimited,
  storeFailed,
  withDefaults
} from "../lib/dist/index.js"

export const explain = (error: unknown): string => {
  const waited = permitWaitTimeout(error)
  if (waited !== undefined) return `${waited.bulkhead}: waited ${Duration.format(waited.waited)} for a permit`
  const queued = providerPermitWait(error)
  if (queued !== undefined) {
    return `${queued.bulkhead}: ${queued.aheadWhenQueued} ahead when queued, ${queued.inFlight} of ${queued.permits} in flight`
  }
  const full = bulkheadFull(error)
  if (full !== undefined) return `${full.bulkhead}: ${full.waiting} of ${full.maxWaiting} already waiting`
  const slow = callTimeout(error)
  if (slow !== undefined) return `${slow.provider}: attempt ${slow.attempt} passed ${Duration.format(slow.timeout)}`
  const limited = rateLimited(error)
  if (limited !== undefined) return `${limited.name}: retry after ${Duration.format(limited.retryAfter)}`
  const store = storeFailed(error) ?? providerStoreFailed(error)
  if (store !== undefined) return `store: ${store.message}`
  return String(error)
}

export const permits: number = withDefaults(4).bulkhead.permits
