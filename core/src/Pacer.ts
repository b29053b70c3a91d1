/**
 * A limiter's local pacer, on plain numbers: the limits applied to the actual starts of one
 * process, so that timers firing late never bunch starts, and the pause that holds this process's
 * callers. The store decides reservations; the pacer only holds a start that would break a limit
 * where it happens. Every method takes `now` (milliseconds) and never reads a clock.
 *
 * @since 0.1.0
 */
import {
  commitAll,
  earliestAll,
  earliestStartAll,
  EPSILON_MILLIS,
  initialState,
  type LimitSpec,
  type LimitState,
  restorePoint,
  rollbackAll
} from "./Algorithm.js"
import { settleAll } from "./Settlement.js"

/**
 * Where the pacer charged a start: when, and each limit's `restorePoint` before.
 *
 * @since 0.1.0
 * @category models
 */
export interface LocalCharge {
  readonly at: number
  readonly points: ReadonlyArray<number>
  /** The pacer's number for this charge: a release rolls it back exactly while it is the latest. */
  readonly seq: number
}

/**
 * The pacer of one limiter, owned by its binding.
 *
 * @since 0.1.0
 * @category constructors
 */
export class Pacer {
  private readonly states: Array<LimitState>
  // Charges are numbered; `top` is the latest not rolled back, which a release takes back exactly,
  // as the store's refund does for the latest reservation.
  private seq = 0
  private top = 0
  /** The end of the latest pause this process knows of (set or learned from its store). */
  pauseUntil = Number.NEGATIVE_INFINITY

  constructor(readonly specs: ReadonlyArray<LimitSpec>) {
    this.states = specs.map(initialState)
  }

  /** Holds this process's starts until `now + millis` (extends, never shortens). */
  pauseFor(now: number, millis: number): void {
    this.pauseUntil = Math.max(this.pauseUntil, now + millis)
  }

  /** Whether a start of `costs` may happen now: the pause is over and every limit allows it. */
  mayStart(now: number, costs: ReadonlyArray<number>): boolean {
    return now + EPSILON_MILLIS >= this.pauseUntil &&
      earliestStartAll(this.specs, this.states, now, costs) <= now + EPSILON_MILLIS
  }

  /** Whether the pause is over (for a start admitted without a quota, which the limits skip). */
  unpaused(now: number): boolean {
    return now + EPSILON_MILLIS >= this.pauseUntil
  }

  /**
   * When a caller reserved for `target` may start as far as this process knows: its reservation,
   * the pause, and the limits on the starts so far (skipped for a start without a quota).
   */
  startAt(target: number, now: number, costs: ReadonlyArray<number>, unlimited: boolean): number {
    return Math.max(
      target,
      this.pauseUntil,
      unlimited ? now : earliestStartAll(this.specs, this.states, now, costs)
    )
  }

  /** Whether the pause holds a start at `at` (rather than a limit). */
  pausedAt(at: number): boolean {
    return this.pauseUntil >= at - EPSILON_MILLIS
  }

  /** The index of the limit that holds a start of `costs` now, -1 when none does. */
  binding(now: number, costs: ReadonlyArray<number>): number {
    return earliestAll(this.specs, this.states, now, costs).binding
  }

  /** Charges a start now; with `track`, answers where, for the reservation's settle. */
  charge(now: number, costs: ReadonlyArray<number>, track: boolean): LocalCharge | undefined {
    const points = track ? this.specs.map((spec, i) => restorePoint(spec, this.states[i], now)) : undefined
    commitAll(this.specs, this.states, now, now, costs)
    this.top = ++this.seq
    return points === undefined ? undefined : { at: now, points, seq: this.seq }
  }

  /**
   * A reservation's usage, applied to the starts as the store applies it to the shared state: a
   * release of the latest charge rolls it back exactly, anything else settles to `actual`.
   */
  settle(
    local: LocalCharge,
    reserved: ReadonlyArray<number>,
    actual: ReadonlyArray<number>,
    released: boolean,
    now: number
  ): void {
    if (released && local.seq === this.top) {
      rollbackAll(this.specs, this.states, now, reserved, local.points)
      this.top -= 1
      return
    }
    settleAll(this.specs, this.states, now, local.at, reserved, actual, local.points)
  }
}
