/**
 * The parity table of the fleet bulkhead: options each line resolves (accepted, with what they
 * resolve to, or refused with a reason) and store errors built from their fields, run by both
 * lines (`parity.test.ts` here, `effect3.mjs` for the 0.x line). `{ millis }` stands for a
 * `Duration` of the milliseconds, built by the line that runs the case.
 */
export type Value = string | number | boolean | { readonly millis: number }

const options: ReadonlyArray<Record<string, Value | undefined>> = [
  { name: "geo", permits: 4 },
  { name: "geo", permits: 4, maxPermits: 8, maxWaiting: 10, maxWait: "2 seconds", leaseTtl: { millis: 900 } },
  { name: "geo", permits: 4, leaseTtl: "1 hour", onLeaseLost: "interrupt", prefix: "app:" },
  { name: "geo", permits: 4, storeDown: "local", localShare: 0.25 },
  { name: "geo", permits: 4, storeDown: "fail-open" },
  { name: "geo", permits: 3, storeDown: "local", localShare: 1 / 3 },
  { name: "", permits: 4 },
  { name: "a{b}", permits: 4 },
  { name: 7, permits: 4 },
  { name: "geo", permits: 0 },
  { name: "geo", permits: 2.5 },
  { name: "geo", permits: "four" },
  { name: "geo", permits: 4, maxPermits: 2 },
  { name: "geo", permits: 4, maxWaiting: -1 },
  { name: "geo", permits: 4, maxWait: "-1 seconds" },
  { name: "geo", permits: 4, maxWait: "soon" },
  { name: "geo", permits: 4, leaseTtl: { millis: 299 } },
  { name: "geo", permits: 4, leaseTtl: "2 hours" },
  { name: "geo", permits: 4, leaseTtl: 0 },
  { name: "geo", permits: 4, onLeaseLost: "panic" },
  { name: "geo", permits: 4, storeDown: "fail-sometimes" },
  { name: "geo", permits: 4, storeDown: "local" },
  { name: "geo", permits: 4, localShare: 0.5 },
  { name: "geo", permits: 4, storeDown: "fail-open", localShare: 0.5 },
  { name: "geo", permits: 4, storeDown: "local", localShare: 0 },
  { name: "geo", permits: 4, storeDown: "local", localShare: 1.5 },
  { name: "geo", permits: 4, prefix: "a{" },
  { name: "geo", permits: 4, prefix: 3 }
]

const errors: ReadonlyArray<{
  readonly operation: string
  readonly cause: string
  readonly asError: boolean
  readonly policy: string
}> = [
  { operation: "acquire", cause: "Command timed out", asError: true, policy: "fail-closed" },
  { operation: "renew", cause: "Stream isn't writeable", asError: true, policy: "local" },
  { operation: "stats", cause: "down", asError: false, policy: "fail-open" }
]

export const table = { options, errors }
