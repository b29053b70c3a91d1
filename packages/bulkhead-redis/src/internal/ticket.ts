/** A ticket's life in this process. @internal */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
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

/** @internal */
export interface Ticket {
  readonly nonce: string
  readonly cost: number
  /**
   * `<ticket>:<cost>:<ttl>:<nonce>`, the lease id (`c:<cost>:<ttl>:<nonce>` for a fallback holder);
   * empty until Redis answered.
   */
  member: string
  state: State
  /** How the wait ended (`settle`): true at the grant, false when the waiting lease was lost. */
  outcome: boolean | undefined
  /** The waiting fiber's resumption while it waits for `outcome` (`awaitOutcome`). */
  wake: ((granted: boolean) => void) | undefined
  /** Bench variant (SLUICE_BULKHEAD_REDIS_VARIANT "deferred"): the wait as a `Deferred`, made when first needed. */
  readonly useDeferred: boolean
  signal: Deferred.Deferred<boolean> | undefined
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
export const make = (mark: string, cost: number, useDeferred = false): Ticket => ({
  nonce: `${mark}.${(nonces++).toString(36)}`,
  cost,
  member: "",
  state: ASKING,
  outcome: undefined,
  wake: undefined,
  useDeferred,
  signal: undefined,
  lostSignal: undefined,
  lost: false,
  renewedAt: 0,
  localScope: undefined,
  needsClaim: false,
  handedFrom: ""
})

/** The ticket's place in the global order: the number its member starts with (NaN before Redis answered). @internal */
export const numberOf = (ticket: Ticket): number => Number.parseInt(ticket.member, 10)

/** Ends the ticket's wait, once: `granted` false means the waiting lease was lost. @internal */
export const settle = (ticket: Ticket, granted: boolean): void => {
  if (ticket.useDeferred) return void Deferred.unsafeDone(signalOf(ticket), Exit.succeed(granted))
  if (ticket.outcome !== undefined) return
  ticket.outcome = granted
  const wake = ticket.wake
  ticket.wake = undefined
  if (wake !== undefined) wake(granted)
}

const grantedNow = Effect.succeed(true)
const lostNow = Effect.succeed(false)

/**
 * Waits for the ticket's `outcome` (at once if it is settled already); an interrupted wait leaves
 * nothing behind. One waiter per ticket: a callback on it rather than a `Deferred` (one object less
 * per queued ticket, on the path every contended acquire takes).
 *
 * @internal
 */
export const awaitOutcome = (ticket: Ticket): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (ticket.outcome !== undefined) return resume(ticket.outcome ? grantedNow : lostNow)
    ticket.wake = (granted) => resume(granted ? grantedNow : lostNow)
    return Effect.sync(() => {
      ticket.wake = undefined
    })
  })

const signalOf = (ticket: Ticket): Deferred.Deferred<boolean> =>
  ticket.signal ??= Deferred.unsafeMake<boolean>(FiberId.none)

/** The bench variant's wait: Effect's own hand-off. @internal */
export const awaitSignal = (ticket: Ticket): Effect.Effect<boolean> =>
  Effect.suspend(() => Deferred.await(signalOf(ticket)))
