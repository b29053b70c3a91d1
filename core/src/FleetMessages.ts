/**
 * The sentences of a fleet bulkhead, built from their fields: its option rules, its defects, its
 * `BulkheadStoreError`, and what it logs (a lost lease, a late grant, an outage and the recovery).
 * Both Effect lines' `RedisBulkhead` take them from here, so that the same event prints the same
 * bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
import { minLeaseTtlMillis } from "./FleetTicket.js"
import { show } from "./OptionMessages.js"

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The rule of `leaseTtl`.
 *
 * @since 0.1.0
 * @category options
 */
export const leaseTtlRule = `a duration from ${minLeaseTtlMillis}ms to 1 hour`

/**
 * The rule of `prefix`: a brace would end the hash tag that keeps a bulkhead's keys in one slot.
 *
 * @since 0.1.0
 * @category options
 */
export const noBracesRule = "a string without braces"

/**
 * Whether a text may name a bulkhead or prefix its keys (no braces).
 *
 * @since 0.1.0
 * @category options
 */
export const hasNoBraces = (text: string): boolean => !/[{}]/.test(text)

/**
 * @since 0.1.0
 * @category options
 */
export const badName = (name: unknown): string =>
  `a Redis bulkhead needs a non-empty name without braces, got ${show(name)}`

/**
 * `localShare` missing with `storeDown: "local"`.
 *
 * @since 0.1.0
 * @category options
 */
export const localShareNeeded = (permits: number): string =>
  `is needed with storeDown "local": the share of K (${permits}) one process may hold ` +
  `alone while Redis is down, in (0, 1] (1 / the number of processes)`

/**
 * `localShare` given with another policy.
 *
 * @since 0.1.0
 * @category options
 */
export const localShareUnused = (storeDown: string | undefined): string =>
  `applies to storeDown "local" only, got storeDown ${show(storeDown ?? "fail-closed")}`

/**
 * @since 0.1.0
 * @category defects
 */
export const badCost = (name: string, maxPermits: number, cost: unknown): string =>
  `bulkhead "${name}": permits must be an integer from 1 to maxPermits (${maxPermits}), got ${cost}`

/**
 * @since 0.1.0
 * @category defects
 */
export const badResize = (name: string, maxPermits: number, permits: unknown): string =>
  `bulkhead "${name}": resize needs an integer from 1 to maxPermits (${maxPermits}), got ${permits}`

/**
 * @since 0.1.0
 * @category defects
 */
export const noLane = (name: string, lane: unknown, declared: ReadonlyArray<string>): string =>
  `bulkhead "${name}": no lane ${show(lane)} (its lanes: ${declared.join(", ")})`

/**
 * The fields of a `BulkheadStoreError` that its sentence names.
 *
 * @since 0.1.0
 * @category errors
 */
export interface StoreErrorFields {
  readonly bulkhead: string
  readonly operation: string
  readonly cause: unknown
  readonly policy: string
}

/**
 * @since 0.1.0
 * @category errors
 */
export const storeError = (f: StoreErrorFields): string => {
  const cause = f.cause instanceof Error ? f.cause.message : String(f.cause)
  return `bulkhead "${f.bulkhead}": Redis did not answer its ${f.operation} (${cause})` +
    (f.policy === "fail-closed" ? "; it fails closed while Redis is unreachable" : "")
}

/**
 * Logged when the bulkhead goes degraded: the store error's message, and with a fallback policy
 * the local bulkhead that admits calls meanwhile.
 *
 * @since 0.1.0
 * @category logs
 */
export const wentDown = (
  errorMessage: string,
  fallback: { readonly permits: number; readonly storeDown: string; readonly fleetPermits: number } | undefined
): string =>
  fallback === undefined
    ? errorMessage
    : `${errorMessage}: calls run on a local bulkhead of ${plural(fallback.permits, "permit")} ` +
      `(storeDown "${fallback.storeDown}", of K = ${fallback.fleetPermits}) until Redis answers again`

/**
 * @since 0.1.0
 * @category logs
 */
export const cameBack = (name: string): string => `bulkhead "${name}": Redis answers again, permits are shared again`

/**
 * Logged once per recovery while fallback holders wait for free permits to be counted.
 *
 * @since 0.1.0
 * @category logs
 */
export const unclaimed = (name: string, permits: number, fleetPermits: number): string =>
  `bulkhead "${name}": calls admitted by the local fallback while Redis was down hold ` +
  `${plural(permits, "permit")} Redis cannot count yet (the fleet's permits are ` +
  `taken); they are counted as soon as permits free up, and until then the fleet may exceed K = ${fleetPermits}`

/**
 * How late the last renewal of a lease found gone was: the usual reason for a lost lease.
 *
 * @since 0.1.0
 * @category logs
 */
export const renewedLate = (ageMillis: number, leaseTtlMillis: number): string =>
  ageMillis > leaseTtlMillis
    ? `renewed last ${ageMillis}ms ago, past its TTL of ${leaseTtlMillis}ms`
    : `renewed last ${ageMillis}ms ago, within its TTL of ${leaseTtlMillis}ms: Redis lost it (a restart, a flush or a failover)`

/**
 * Why a hand-over's heir holds nothing: Redis did not count the permits handed to it.
 *
 * @since 0.1.0
 * @category logs
 */
export const handOverRefused = (fleetPermits: number, used: number): string =>
  `the permits a holder of this process handed it were not counted by Redis (K = ${fleetPermits}, ` +
  `${used} in use: a shrink not heard of yet, or the holder's lease had ended and its permits ` +
  `were taken)`

/**
 * @since 0.1.0
 * @category logs
 */
export interface LeaseLostFields {
  readonly bulkhead: string
  readonly member: string
  readonly cost: number
  readonly why: string
  readonly fleetPermits: number
  readonly interrupting: boolean
}

/**
 * @since 0.1.0
 * @category logs
 */
export const leaseLost = (f: LeaseLostFields): string =>
  `bulkhead "${f.bulkhead}": the lease of ticket ${f.member} (${plural(f.cost, "permit")}) was lost: ${f.why}; ` +
  `its permits may be held by another call, so the fleet may exceed ${f.fleetPermits} permits until this call ends` +
  (f.interrupting ? " (interrupting it)" : "")

/**
 * A grant read too late to start a call on.
 *
 * @since 0.1.0
 * @category logs
 */
export const tooLate = (name: string, member: string, lateMillis: number, leaseTtlMillis: number): string =>
  `bulkhead "${name}": the grant of ticket ${member} was read ${lateMillis}ms ` +
  `after the script its lease counts from was sent, past two thirds of its TTL of ${leaseTtlMillis}ms ` +
  `(was this process paused?): its permits may be another's by now, so it starts no call and queues again at the tail`

/**
 * A waiting ticket whose waiting lease ended.
 *
 * @since 0.1.0
 * @category logs
 */
export const outlived = (name: string, member: string, leaseTtlMillis: number): string =>
  `bulkhead "${name}": the waiting ticket ${member} outlived its lease ` +
  `(${leaseTtlMillis}ms without renewal: was this process paused, or did Redis restart?); ` +
  `it queues again at the tail`

/**
 * @since 0.1.0
 * @category defects
 */
export const unexpectedReply = (reply: unknown): string => `unexpected reply ${JSON.stringify(reply)}`

/**
 * @since 0.1.0
 * @category defects
 */
export const noFallback = "no fallback with storeDown fail-closed"
