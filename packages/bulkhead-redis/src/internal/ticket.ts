/** A ticket's life in this process. @internal */
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"

/** Asked Redis for it; no answer yet. @internal */
export const ASKING = 0
/** Queued in Redis, waiting for its grant. @internal */
export const QUEUED = 1
/** Granted and told, not yet handed to the call. @internal */
export const GRANTED = 2
/** Holding a fleet lease. @internal */
export const HELD = 3
/** Admitted on the local fallback while Redis was down: holding no fleet lease (yet). @internal */
export const LOCAL = 4
/** Released, refused or forgotten. @internal */
export const GONE = 5

/** @internal */
export type State = typeof ASKING | typeof QUEUED | typeof GRANTED | typeof HELD | typeof LOCAL | typeof GONE

/**
 * One of this instance's tickets in the fleet's order, from its acquire to its release (the local
 * bulkhead's queue entry is another thing).
 *
 * @internal
 */
export interface FleetTicket {
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
  /** The waiting fiber's resumption while it waits for `outcome` (`woken`). */
  resume: ((granted: boolean) => void) | undefined
  /** Completed when the held lease is found lost, with `onLeaseLost: "interrupt"`. */
  lostSignal: Deferred.Deferred<void> | undefined
  lost: boolean
  /**
   * When the lease was last extended (this process's clock, ms), read before the script that
   * extended it was sent: its deadline in Redis is at least this + TTL, however late the reply is
   * read. How late a lost renewal was, and whether the ticket may take part in a hand-over.
   */
  renewedAt: number
  /** The local fallback's permits of a call admitted while Redis was down, given back with the ticket. */
  localScope: Scope.CloseableScope | undefined
  /**
   * Redis must be asked to count this holder (a claim): it held its lease through an outage, or it
   * was admitted on the fallback. Cleared once Redis answers for it.
   */
  needsClaim: boolean
  /**
   * The member of the holder that handed this ticket its permits (`Impl.handOver`), until Redis
   * answers the hand-over; empty otherwise. A holder Redis may not count sends the hand-over again.
   */
  handedFrom: string
}

/** This process's random part of every mark. */
const processMark = randomBytes(6).toString("hex")
let instances = 0

/**
 * A new mark, one per bulkhead instance: every nonce of the instance starts with it (then a dot and
 * a counter: unique without a random draw each), and the scripts publish its grants on a channel
 * named after it. Hexadecimal, as the scripts read it.
 *
 * @internal
 */
export const newMark = (): string => `${processMark}${(instances++).toString(16)}`
let nonces = 0

/** @internal */
export const make = (mark: string, cost: number): FleetTicket => ({
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

/** The ticket's place in the global order: the number its member starts with (NaN before Redis answered). @internal */
export const numberOf = (ticket: FleetTicket): number => Number.parseInt(ticket.member, 10)

/** Ends the ticket's wait, once (the first wake stands): `granted` false means its waiting lease was lost. @internal */
export const wake = (ticket: FleetTicket, granted: boolean): void => {
  if (ticket.outcome !== undefined) return
  ticket.outcome = granted
  const resume = ticket.resume
  ticket.resume = undefined
  if (resume !== undefined) resume(granted)
}

const grantedNow = Effect.succeed(true)
const lostNow = Effect.succeed(false)

/**
 * Waits for the ticket's wake (at once if it was woken already); an interrupted wait leaves nothing
 * behind. One waiter per ticket: a callback on it rather than a `Deferred`, which Effect 3 builds by
 * copying its prototype, once per queued ticket (weighed against one in RFC 0002: it pays).
 *
 * @internal
 */
export const woken = (ticket: FleetTicket): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (ticket.outcome !== undefined) return resume(ticket.outcome ? grantedNow : lostNow)
    ticket.resume = (granted) => resume(granted ? grantedNow : lostNow)
    return Effect.sync(() => {
      ticket.resume = undefined
    })
  })
