/**
 * A caller between its reservation and its start, as the limiter's queue holds it.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import type * as RateLimiter from "../RateLimiter.js"
import type * as usage from "./usage.js"

/** In the queue, waiting for its start. */
export const QUEUED = 0
/** Started, or gone (interrupted): nothing more to do for it. */
export const DONE = 1

/**
 * A caller between its reservation and its start. Waiting callers form one queue ordered by their
 * reserved starts (first come first served among equal ones), linked through `prev`/`next`.
 */
export interface Waiter {
  /** What it takes on each limit. */
  readonly costs: ReadonlyArray<number>
  readonly reservation: number
  /** What the store needs to take the reservation back exactly. */
  readonly restore: ReadonlyArray<number> | undefined
  /** When its reservation lets it start, on this process's clock. */
  readonly target: number
  /** When the store answered. */
  readonly decidedAt: number
  /** The latest start its `maxWait` allows (`Infinity`: none), and that budget. */
  readonly deadline: number
  readonly maxWaitMillis: number
  /** Admitted without a quota (a fail-open store): neither paced nor counted by the pacer. */
  readonly unlimited: boolean
  /** A reservation, to be settled: remember where the pacer charged it. */
  readonly track: boolean
  /** Where the pacer charged it, once started (when tracked). */
  local: usage.LocalCharge | undefined
  /** At the head: the instant it sleeps until (no one behind it starts earlier). */
  plannedAt: number
  /** The caller's span, which gets the wait as an attribute. */
  readonly span: Tracer.AnySpan | undefined
  state: typeof QUEUED | typeof DONE
  prev: Waiter | undefined
  next: Waiter | undefined
  /** Set while it waits, without a timer, for its turn at the head. */
  resume: ((effect: Effect.Effect<void, RateLimiter.RateLimiterError>) => void) | undefined
}
