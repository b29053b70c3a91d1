/**
 * What both queues share: the permits held and by how many, and the life of a granted ticket. A
 * queue decides only who is next (`dispatch`) and how a queued ticket leaves (`leave`).
 *
 * @internal
 */

/**
 * A waiter's life: `queued`, then `granted` by a release (the permits are taken on its behalf),
 * then `held` once its caller has taken them over; or `gone` when it left without them.
 *
 * @internal
 */
export type TicketState = "queued" | "granted" | "held" | "gone"

/** @internal */
export interface Waiting {
  state: TicketState
  readonly cost: number
}

/** @internal */
export abstract class Permits<T extends Waiting> {
  /** Permits held right now. May exceed `permits` after a shrink, until holders finish. */
  inFlight = 0
  /** Holders of permits right now. */
  holders = 0
  /** Tickets queued. */
  waiting = 0
  /** Permits the queued tickets ask for in total. */
  waitingPermits = 0

  constructor(
    /** The current number of permits. */
    public permits: number,
    private readonly onInFlight: (inFlight: number) => void
  ) {}

  /** Grants what now fits, in the queue's order, stopping at the first chosen that does not fit. */
  abstract dispatch(): void

  /**
   * Takes a still queued ticket out of the queue without granting anything, so that its caller
   * can be told before anyone else is woken; `dispatch` must follow. False if it was not queued.
   */
  abstract leave(ticket: T): boolean

  /** The caller of a granted ticket took its permits over: from now on it owes `release(cost)`. */
  hold(ticket: T): void {
    if (ticket.state === "granted") ticket.state = "held"
  }

  /** Gives back `cost` permits of one holder, and grants them to the tickets that now fit. */
  release(cost: number): void {
    this.inFlight -= cost
    this.holders--
    this.onInFlight(this.inFlight)
    this.dispatch()
  }

  /**
   * The ticket's caller no longer wants the permits (interrupted, or its budget ran out). Queued:
   * it leaves, and what it held back may now be granted. Granted but not yet held: the permits go
   * back. Held or gone: nothing to do, so calling this twice is harmless.
   */
  abandon(ticket: T): void {
    if (this.leave(ticket)) {
      this.dispatch()
    } else if (ticket.state === "granted") {
      ticket.state = "gone"
      this.release(ticket.cost)
    }
  }

  /** Changes the number of permits. Growing grants at once; shrinking takes nothing back. */
  resize(permits: number): void {
    this.permits = permits
    this.dispatch()
  }

  protected take(cost: number): void {
    this.inFlight += cost
    this.holders++
    this.onInFlight(this.inFlight)
  }
}
