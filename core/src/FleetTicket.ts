/**
 * A fleet bulkhead's ticket on plain values: its states, its nonce and lease-id (member) formats,
 * its one-waiter wake, the options' defaults and bounds, the lease arithmetic, and the decoding of
 * the scripts' replies (`FleetScripts`). Both Effect lines' `RedisBulkhead` build on it, each
 * keeping only its effects (the wait, the signal of a lost lease, the fallback's scope).
 *
 * @since 0.1.0
 */
import { ACQUIRE, TRY_ACQUIRE } from "./FleetScripts.js"

/**
 * Asked Redis for it; no answer yet.
 *
 * @since 0.1.0
 * @category states
 */
export const ASKING = 0
/**
 * Queued in Redis, waiting for its grant.
 *
 * @since 0.1.0
 * @category states
 */
export const QUEUED = 1
/**
 * Granted and told, not yet handed to the call.
 *
 * @since 0.1.0
 * @category states
 */
export const GRANTED = 2
/**
 * Holding a fleet lease.
 *
 * @since 0.1.0
 * @category states
 */
export const HELD = 3
/**
 * Admitted on the local fallback while Redis was down: holding no fleet lease (yet).
 *
 * @since 0.1.0
 * @category states
 */
export const LOCAL = 4
/**
 * Released, refused or forgotten.
 *
 * @since 0.1.0
 * @category states
 */
export const GONE = 5

/**
 * @since 0.1.0
 * @category states
 */
export type State = typeof ASKING | typeof QUEUED | typeof GRANTED | typeof HELD | typeof LOCAL | typeof GONE

/**
 * One of a bulkhead instance's tickets in the fleet's order, from its acquire to its release (the
 * local bulkhead's queue entry is another thing). `Signal` and `LocalScope` are the binding's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ticket<Signal, LocalScope> {
  readonly nonce: string
  readonly cost: number
  /**
   * `<ticket>:<cost>:<ttl>:<nonce>`, the lease id (`c:<cost>:<ttl>:<nonce>` for a fallback holder);
   * empty until Redis answered.
   */
  member: string
  state: State
  /** How the wait ended (`wake`): true at the grant, false when the waiting lease was lost. */
  outcome: boolean | undefined
  /** The waiting fiber's resumption while it waits for `outcome`. */
  resume: ((granted: boolean) => void) | undefined
  /** Completed when the held lease is found lost, with `onLeaseLost: "interrupt"`. */
  lostSignal: Signal | undefined
  lost: boolean
  /**
   * When the lease was last extended (this process's clock, ms), read before the script that
   * extended it was sent: its deadline in Redis is at least this + TTL, however late the reply is
   * read. How late a lost renewal was, and whether the ticket may take part in a hand-over.
   */
  renewedAt: number
  /** The local fallback's permits of a call admitted while Redis was down, given back with the ticket. */
  localScope: LocalScope | undefined
  /**
   * Redis must be asked to count this holder (a claim): it held its lease through an outage, or it
   * was admitted on the fallback. Cleared once Redis answers for it.
   */
  needsClaim: boolean
  /**
   * The member of the holder that handed this ticket its permits, until Redis answers the
   * hand-over; empty otherwise. A holder Redis may not count sends the hand-over again.
   */
  handedFrom: string
}

/**
 * The marks of one process: `random` (hexadecimal, drawn once by the binding) and a counter, one
 * per bulkhead instance. Every nonce of an instance starts with its mark, and the scripts publish
 * its grants on a channel named after it. Hexadecimal, as the scripts read it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const marks = (random: string): () => string => {
  let instances = 0
  return () => `${random}${(instances++).toString(16)}`
}

let nonces = 0

/**
 * A new ticket of the instance marked `mark`: its nonce is the mark, a dot and a counter (unique
 * without a random draw each).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Signal, LocalScope>(mark: string, cost: number): Ticket<Signal, LocalScope> => ({
  nonce: `${mark}.${(nonces++).toString(36)}`,
  cost,
  member: "",
  state: ASKING,
  outcome: undefined,
  resume: undefined,
  lostSignal: undefined,
  lost: false,
  renewedAt: 0,
  localScope: undefined,
  needsClaim: false,
  handedFrom: ""
})

/**
 * The ticket's place in the global order: the number its member starts with (NaN before Redis answered).
 *
 * @since 0.1.0
 * @category getters
 */
export const numberOf = (ticket: { readonly member: string }): number => Number.parseInt(ticket.member, 10)

/**
 * The nonce a member ends with: the key of its ticket in the instance's map.
 *
 * @since 0.1.0
 * @category getters
 */
export const nonceOf = (member: string): string => member.slice(member.lastIndexOf(":") + 1)

/**
 * The member a fallback holder claims once Redis answers: no ticket number (it never queued).
 *
 * @since 0.1.0
 * @category getters
 */
export const fallbackMember = (cost: number, leaseTtlMillis: number, nonce: string): string =>
  `c:${cost}:${leaseTtlMillis}:${nonce}`

/**
 * Ends the ticket's wait, once (the first wake stands): `granted` false means its waiting lease was lost.
 *
 * @since 0.1.0
 * @category mutations
 */
export const wake = (ticket: Ticket<unknown, unknown>, granted: boolean): void => {
  if (ticket.outcome !== undefined) return
  ticket.outcome = granted
  const resume = ticket.resume
  ticket.resume = undefined
  if (resume !== undefined) resume(granted)
}

// ---------------------------------------------------------------------------------------------
// defaults, bounds and lease arithmetic
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultPrefix = "sluice:bh:"

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultLeaseTtlMillis = 10_000

/**
 * Three renewals per TTL leave two chances for a late one; below 300 ms a busy event loop loses leases.
 *
 * @since 0.1.0
 * @category defaults
 */
export const minLeaseTtlMillis = 300

/**
 * A dead process's permits come back after the TTL: past an hour that is no bound a fleet can wait for.
 *
 * @since 0.1.0
 * @category defaults
 */
export const maxLeaseTtlMillis = 3_600_000

/**
 * Whether a lease TTL (ms) is within the bounds.
 *
 * @since 0.1.0
 * @category defaults
 */
export const isLeaseTtl = (millis: number): boolean => millis >= minLeaseTtlMillis && millis <= maxLeaseTtlMillis

/**
 * How soon the beat tries again after a renewal or a claim that Redis did not answer, and while
 * acquires given up on wait to be ended: the leases and the fleet's K are back this soon after
 * Redis answers, not a third of the TTL later.
 *
 * @since 0.1.0
 * @category defaults
 */
export const RETRY_MILLIS = 200

/**
 * The most operations one `batch` script carries. A turn that asks for more sends several, back to
 * back: Redis runs one while the reply of the one before is read, and no script holds Redis long.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MAX_BATCH = 32

/**
 * A lease is renewed every third of its TTL: two chances for a late renewal.
 *
 * @since 0.1.0
 * @category leases
 */
export const renewEveryMillis = (leaseTtlMillis: number): number => Math.floor(leaseTtlMillis / 3)

/**
 * How long after its last renewal a ticket still takes part in a hand-over, or a grant may start
 * a call: two thirds of the TTL, so that its lease (renewed every third) outlives the script that
 * carries the hand-over.
 *
 * @since 0.1.0
 * @category leases
 */
export const freshMillis = (leaseTtlMillis: number): number => Math.floor(leaseTtlMillis * 2 / 3)

/**
 * The permits of the local fallback for a fleet of `permits`: `⌊K × share⌋`, at least 1 (a share
 * rounding to zero would stop the process altogether).
 *
 * @since 0.1.0
 * @category leases
 */
export const fallbackPermits = (permits: number, localShare: number): number =>
  Math.max(1, Math.floor(permits * localShare + 1e-9))

/**
 * A `maxWaiting` as the scripts take it (`-1`: unbounded).
 *
 * @since 0.1.0
 * @category replies
 */
export const maxWaitingArg = (maxWaiting: number): string => maxWaiting === Infinity ? "-1" : String(maxWaiting)

/**
 * An acquire's argument: its cost, and under a lane policy its lane's bound and name.
 *
 * @since 0.1.0
 * @category replies
 */
export const acquireArg = (cost: number, lane?: { readonly name: string; readonly maxWaitingArg: string }): string =>
  lane === undefined ? String(cost) : `${cost} ${lane.maxWaitingArg} ${lane.name}`

/**
 * @since 0.1.0
 * @category guards
 */
export const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

// ---------------------------------------------------------------------------------------------
// replies
// ---------------------------------------------------------------------------------------------

/**
 * A number of a script's reply (Redis answers integers, and strings for some).
 *
 * @since 0.1.0
 * @category replies
 */
export const int = (u: unknown): number => (typeof u === "number" ? u : Number(u))

/**
 * @since 0.1.0
 * @category replies
 */
export const isArray = (u: unknown): u is ReadonlyArray<unknown> => Array.isArray(u)

/**
 * The fleet's counters of a `stats` reply.
 *
 * @since 0.1.0
 * @category replies
 */
export interface StatsReply {
  readonly permits: number
  readonly inFlight: number
  readonly holders: number
  readonly waiting: number
  readonly waitingPermits: number
}

/**
 * @since 0.1.0
 * @category replies
 */
export const statsOf = (reply: ReadonlyArray<unknown>): StatsReply => ({
  permits: int(reply[0]),
  inFlight: int(reply[1]),
  holders: int(reply[2]),
  waiting: int(reply[3]),
  waitingPermits: int(reply[4])
})

/**
 * One lane of a lane `stats` reply, fleet-wide.
 *
 * @since 0.1.0
 * @category replies
 */
export interface LaneReply {
  readonly name: string
  readonly waiting: number
  readonly waitingPermits: number
  readonly granted: number
}

/**
 * The lanes of a lane `stats` reply (its sixth entry): `{lane, waiting, waitingPermits, granted}` each.
 *
 * @since 0.1.0
 * @category replies
 */
export const lanesOf = (reply: unknown): ReadonlyArray<LaneReply> =>
  isArray(reply)
    ? reply.filter(isArray).map((entry) => ({
      name: String(entry[0]),
      waiting: int(entry[1]),
      waitingPermits: int(entry[2]),
      granted: int(entry[3])
    }))
    : []

/**
 * Whether a batch's last reply counts more permits in use than K (a shrink): an acquire answers
 * `{kind, member, used, permits, ...}`, a release or hand-over `{state, used, permits}`; undefined
 * when the reply says nothing.
 *
 * @since 0.1.0
 * @category replies
 */
export const overK = (code: string, reply: unknown): boolean | undefined => {
  if (!isArray(reply)) return undefined
  const acquire = code === ACQUIRE || code === TRY_ACQUIRE
  return int(reply[acquire ? 2 : 1]) > int(reply[acquire ? 3 : 2])
}

/**
 * A grant message: the limit of the instance's head run, then one member per granted ticket.
 *
 * @since 0.1.0
 * @category replies
 */
export const grantsOf = (message: string): { readonly limit: number; readonly members: ReadonlyArray<string> } => {
  const words = message.split(" ")
  return { limit: int(words[0]), members: words.slice(1) }
}
