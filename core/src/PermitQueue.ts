/**
 * The permits and the waiter queue of a bulkhead, as plain synchronous code: no Effect, no
 * fibers, no clock. It decides who holds permits and who is next; the caller wakes fibers, runs
 * timers and records metrics. Importing nothing from Effect, it is reused as is by any runtime.
 *
 * Every method runs to completion on JavaScript's one thread, so each is atomic.
 *
 * @since 0.1.0
 */

import type * as Internal from "./internal/permits.js"
import { Permits } from "./internal/permits.js"

/**
 * Which waiter a released permit goes to: the oldest (`fifo`) or the newest (`lifo`).
 *
 * @since 0.1.0
 */
export type Order = "fifo" | "lifo"

/**
 * A waiter's life: `queued`, then `granted` by a release (the permits are taken on its behalf),
 * then `held` once its caller has taken them over; or `gone` when it left without them.
 *
 * @since 0.1.0
 */
export type TicketState = Internal.TicketState

/**
 * One caller's place in the queue. Extend it to carry what the caller needs to be woken; the
 * links and the state belong to the queue.
 *
 * @since 0.1.0
 */
export class Ticket {
  /** Callers queued ahead of this one when it arrived. */
  aheadWhenQueued = 0
  state: TicketState = "queued"
  prev: this | undefined = undefined
  next: this | undefined = undefined
  constructor(readonly cost: number) {}
}

/**
 * What the queue tells its owner. Each change is reported once, as it happens.
 *
 * @since 0.1.0
 */
export interface Hooks<T extends Ticket> {
  /** `ticket` was granted its permits: wake its caller. Called once per grant. */
  readonly granted: (ticket: T) => void
  /** The permits held changed. */
  readonly inFlight: (inFlight: number) => void
  /** The number of queued tickets changed. */
  readonly waiting: (waiting: number) => void
}

/**
 * Permits with a strict queue: a released permit is handed to the next ticket (the oldest, or the
 * newest under `lifo`) in the same step, a newcomer never takes a permit while a ticket is queued
 * (under `fifo`), and a ticket at the front that does not fit stops the grants behind it, so a
 * heavy ticket is never overtaken by lighter ones. Costs are trusted: the caller validates them.
 *
 * @since 0.1.0
 */
export class PermitQueue<T extends Ticket> extends Permits<T> {
  // a doubly linked list, so that a ticket that leaves is unlinked in O(1)
  private head: T | undefined = undefined
  private tail: T | undefined = undefined
  private readonly lifo: boolean

  constructor(
    /** The current number of permits. */
    permits: number,
    order: Order,
    private readonly hooks: Hooks<T>
  ) {
    super(permits, hooks.inFlight)
    this.lifo = order === "lifo"
  }

  /**
   * Takes `cost` permits at once if they are free and no ticket is queued ahead of the caller
   * (under `lifo` a newcomer is the newest, so it may go first). The caller owes `release(cost)`.
   */
  tryTake(cost: number): boolean {
    if ((this.head !== undefined && !this.lifo) || this.inFlight + cost > this.permits) return false
    this.take(cost)
    return true
  }

  /** Queues `ticket`, behind every ticket queued before it. */
  enqueue(ticket: T): T {
    ticket.aheadWhenQueued = this.waiting
    ticket.state = "queued"
    ticket.prev = this.tail
    ticket.next = undefined
    if (this.tail === undefined) this.head = ticket
    else this.tail.next = ticket
    this.tail = ticket
    this.waiting++
    this.waitingPermits += ticket.cost
    this.hooks.waiting(this.waiting)
    return ticket
  }

  /**
   * Takes a still queued ticket out of the queue without granting anything, so that its caller
   * can be told before anyone else is woken; `dispatch` must follow. False if it was not queued.
   */
  override leave(ticket: T): boolean {
    if (ticket.state !== "queued") return false
    ticket.state = "gone"
    this.unlink(ticket)
    return true
  }

  /**
   * Grants free permits to the tickets in order, stopping at the first that does not fit: a heavy
   * ticket at the front is never overtaken by lighter ones. One `granted` call per grant.
   */
  override dispatch(): void {
    for (;;) {
      const ticket = this.lifo ? this.tail : this.head
      if (ticket === undefined || this.inFlight + ticket.cost > this.permits) return
      this.unlink(ticket)
      this.take(ticket.cost)
      ticket.state = "granted"
      this.hooks.granted(ticket)
    }
  }

  private unlink(ticket: T): void {
    if (ticket.prev === undefined) this.head = ticket.next
    else ticket.prev.next = ticket.next
    if (ticket.next === undefined) this.tail = ticket.prev
    else ticket.next.prev = ticket.prev
    ticket.prev = ticket.next = undefined
    this.waiting--
    this.waitingPermits -= ticket.cost
    this.hooks.waiting(this.waiting)
  }
}
