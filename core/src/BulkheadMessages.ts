/**
 * The sentences of a bulkhead's refusals, built from their fields: both Effect lines' `BulkheadFull`
 * and `PermitWaitTimeout` take their `message` from here, so that the same refusal prints the same
 * bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
import { formatDuration } from "./OptionMessages.js"

/**
 * The fields of a `BulkheadFull` refusal that its sentence names.
 *
 * @since 0.1.0
 * @category models
 */
export interface FullFields {
  readonly bulkhead: string
  readonly lane?: string | undefined
  /** With lanes, which `maxWaiting` refused: the lane's own or the bulkhead's, across its lanes. */
  readonly bound?: "lane" | "bulkhead" | undefined
  readonly requested: number
  readonly permits: number
  readonly inFlight: number
  readonly waiting: number
  readonly maxWaiting: number
}

/**
 * The fields of a `PermitWaitTimeout` refusal that its sentence names; the wait in nanoseconds
 * (undefined: infinite), so that no Effect `Duration` crosses into the core.
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitTimeoutFields {
  readonly bulkhead: string
  readonly lane?: string | undefined
  readonly waitedNanos: bigint | undefined
  readonly requested: number
  readonly permits: number
  readonly inFlight: number
  readonly aheadWhenQueued: number
}

const plural = (n: number): string => (n === 1 ? "" : "s")

const lanePart = (lane: string | undefined): string => (lane === undefined ? "" : ` lane "${lane}"`)

/**
 * `bulkhead "geo" is full: 2 of 2 permits in use and 1 caller queued (maxWaiting 1); refused a
 * call for 1 permit`; with lanes, the lane that refused, or "in all its lanes" when the bulkhead's
 * own bound did.
 *
 * @since 0.1.0
 * @category messages
 */
export const full = (f: FullFields): string => {
  const across = f.lane !== undefined && f.bound === "bulkhead"
  return `bulkhead "${f.bulkhead}"${across ? "" : lanePart(f.lane)} is full: ${f.inFlight} of ${f.permits} ` +
    `permits in use and ${f.waiting} caller${plural(f.waiting)} queued${across ? " in all its lanes" : ""} ` +
    `(maxWaiting ${f.maxWaiting}); refused a call for ${f.requested} permit${plural(f.requested)}` +
    (across ? ` in lane "${f.lane}"` : "")
}

/**
 * `bulkhead "geo" gave up after waiting 2s for 1 of 1 permits (1 in use); 1 caller was queued
 * ahead of it when it arrived`. A zero wait reads `0ms`.
 *
 * @since 0.1.0
 * @category messages
 */
export const waitTimeout = (f: WaitTimeoutFields): string => {
  const waited = formatDuration(f.waitedNanos)
  return `bulkhead "${f.bulkhead}"${lanePart(f.lane)} gave up after waiting ${waited === "0" ? "0ms" : waited} ` +
    `for ${f.requested} of ${f.permits} permits (${f.inFlight} in use); ${f.aheadWhenQueued} caller${
      plural(f.aheadWhenQueued)
    } ${f.aheadWhenQueued === 1 ? "was" : "were"} queued ahead of it${
      f.lane === undefined ? "" : " in its lane"
    } when it arrived`
}
