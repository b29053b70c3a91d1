/**
 * The permits and the waiters of a bulkhead with lanes (RFC 0004), as plain synchronous code: no
 * Effect, no fibers, no clock (the caller passes `now` when a ticket queues). It decides who is
 * next; the caller wakes fibers, runs timers and records metrics, as with `PermitQueue`.
 *
 * Two policies:
 * - `priority`: a ticket is due when it queued plus its lane's `yieldForMillis` (zero for the first
 *   lane); the next grant goes to the earliest due ticket, ties to the higher lane. Within a lane
 *   that is FIFO, and a lower lane gains rank at one millisecond per millisecond waited.
 * - `fairShare`: deficit round-robin over the lanes with tickets queued, FIFO within a lane: each
 *   turn adds the lane's weight to its credit (in permits), and the lane is granted while its head
 *   costs no more than its credit. A lane whose queue empties leaves the round and loses its
 *   credit, so an idle lane's share goes to the others.
 *
 * Under both, the ticket chosen next that does not fit the free permits stops every grant behind
 * it, so no lighter ticket of any lane overtakes a heavy one. The policy chooses only while a
 * permit is free: with every permit held nothing is chosen, and a fair share's round stays put. Every method runs to completion on
 * JavaScript's one thread, so each is atomic.
 *
 * @since 0.1.0
 */
import type * as Internal from "./internal/permits.js"
import { Permits } from "./internal/permits.js"

/**
 * A lane of a `priority` policy, highest first.
 *
 * @since 0.1.0
 */
export interface PriorityLane {
  readonly name: string
  /** How long its tickets give way to the lanes above (ms); zero for the first lane. */
  readonly yieldForMillis: number
}

/**
 * How a bulkhead with lanes chooses the next ticket.
 *
 * @since 0.1.0
 */
export type Policy =
  | { readonly _tag: "priority"; readonly lanes: ReadonlyArray<PriorityLane> }
  | { readonly _tag: "fairShare"; readonly weights: ReadonlyMap<string, number>; readonly defaultWeight: number }

/**
 * A waiter's life, as in `PermitQueue`: queued, granted, held; or gone without its permits.
 *
 * @since 0.1.0
 */
export type TicketState = Internal.TicketState

/**
 * One caller's place in its lane. Extend it to carry what the caller needs to be woken.
 *
 * @since 0.1.0
 */
export class LaneTicket {
  /** Callers queued ahead of it in its lane when it arrived. */
  aheadWhenQueued = 0
  state: TicketState = "queued"
  /** When it is due (`priority`: queued at + the lane's yield; `fairShare`: queued at). */
  due = 0
  /** The order of arrival, across lanes: breaks ties between equal due times. */
  seq = 0
  lane: Lane<this> | undefined = undefined
  prev: this | undefined = undefined
  next: this | undefined = undefined
  constructor(readonly cost: number) {}
}

/**
 * One lane: a FIFO list and its counters.
 *
 * @since 0.1.0
 */
export class Lane<T extends LaneTicket> {
  head: T | undefined = undefined
  tail: T | undefined = undefined
  /** Tickets queued in this lane, and the permits they ask for. */
  waiting = 0
  waitingPermits = 0
  /** Permits granted to this lane's tickets since the queue was made (its share, when compared). */
  granted = 0
  /** `fairShare`: the permits this lane may still be granted in its turn. */
  credit = 0
  /** `fairShare`: its place in the round of busy lanes. */
  prevBusy: Lane<T> | undefined = undefined
  nextBusy: Lane<T> | undefined = undefined
  busy = false
  constructor(readonly name: string, readonly rank: number, readonly yieldForMillis: number, readonly weight: number) {}
}

/**
 * What the queue tells its owner, once per change.
 *
 * @since 0.1.0
 */
export interface Hooks<T extends LaneTicket> {
  readonly granted: (ticket: T) => void
  readonly inFlight: (inFlight: number) => void
  readonly waiting: (lane: Lane<T>) => void
}

/**
 * Permits and one queue per lane, granted by the policy: the chosen ticket that does not fit the
 * free permits stops every grant behind it. Costs are trusted: the caller validates them.
 *
 * @since 0.1.0
 */
export class LaneQueue<T extends LaneTicket> extends Permits<T> {
  readonly lanes = new Map<string, Lane<T>>()
  private seq = 0
  // fairShare: the lane whose turn it is, and whether its credit was topped up for this turn
  private turn: Lane<T> | undefined = undefined
  private turnStarted = false
  private busyLanes = 0
  private readonly fair: boolean
  private readonly weights: ReadonlyMap<string, number>
  private readonly defaultWeight: number

  constructor(permits: number, readonly policy: Policy, private readonly hooks: Hooks<T>) {
    super(permits, hooks.inFlight)
    this.fair = policy._tag === "fairShare"
    if (policy._tag === "priority") {
      policy.lanes.forEach((lane, rank) => this.lanes.set(lane.name, new Lane(lane.name, rank, lane.yieldForMillis, 1)))
      this.weights = new Map()
      this.defaultWeight = 1
    } else {
      this.weights = policy.weights
      this.defaultWeight = policy.defaultWeight
    }
  }

  /**
   * The lane of a name: `priority` knows only its declared lanes (undefined otherwise);
   * `fairShare` makes a lane on first sight, at its weight or the default one.
   */
  laneOf(name: string): Lane<T> | undefined {
    const known = this.lanes.get(name)
    if (known !== undefined || !this.fair) return known
    const lane = new Lane<T>(name, this.lanes.size, 0, this.weights.get(name) ?? this.defaultWeight)
    this.lanes.set(name, lane)
    return lane
  }

  /** Takes `cost` permits for `lane` at once if nothing is queued and they are free. */
  tryTake(cost: number, lane: Lane<T>): boolean {
    if (this.waiting > 0 || this.inFlight + cost > this.permits) return false
    lane.granted += cost
    this.take(cost)
    return true
  }

  /**
   * Queues `ticket` in `lane` (from `laneOf`) at `now` (ms), then grants what now fits: a ticket
   * that ranks ahead of a blocked head may be granted at once (`state === "granted"` on return).
   */
  enqueue(ticket: T, lane: Lane<T>, now: number): T {
    ticket.aheadWhenQueued = lane.waiting
    ticket.state = "queued"
    ticket.lane = lane
    ticket.seq = this.seq++
    ticket.due = now + lane.yieldForMillis
    ticket.prev = lane.tail
    ticket.next = undefined
    if (lane.tail === undefined) lane.head = ticket
    else lane.tail.next = ticket
    lane.tail = ticket
    lane.waiting++
    lane.waitingPermits += ticket.cost
    this.waiting++
    this.waitingPermits += ticket.cost
    if (this.fair && !lane.busy) this.joinRound(lane)
    this.hooks.waiting(lane)
    this.dispatch()
    return ticket
  }

  /**
   * Takes a still queued ticket out of its lane without granting anything, so that its caller can
   * be told before anyone else is woken; `dispatch` must follow. False if it was not queued.
   */
  override leave(ticket: T): boolean {
    if (ticket.state !== "queued" || ticket.lane === undefined) return false
    ticket.state = "gone"
    this.unlink(ticket, ticket.lane)
    return true
  }

  /**
   * Grants in the policy's order, stopping at the first chosen ticket that does not fit. The
   * policy decides only while a permit is free, as the fleet's scripts do, so both serve one order.
   */
  override dispatch(): void {
    for (;;) {
      if (this.inFlight >= this.permits) return
      const lane = this.fair ? this.nextFair() : this.nextDue()
      const ticket = lane?.head
      if (lane === undefined || ticket === undefined || this.inFlight + ticket.cost > this.permits) return
      if (this.fair) lane.credit -= ticket.cost
      this.unlink(ticket, lane)
      lane.granted += ticket.cost
      this.take(ticket.cost)
      ticket.state = "granted"
      this.hooks.granted(ticket)
    }
  }

  /** `priority`: the lane of the earliest due head, ties to the higher lane (one look at each). */
  private nextDue(): Lane<T> | undefined {
    let best: Lane<T> | undefined = undefined
    let due = Infinity
    for (const lane of this.lanes.values()) {
      const head = lane.head
      if (head !== undefined && (best === undefined || head.due < due)) {
        best = lane
        due = head.due
      }
    }
    return best
  }

  /**
   * `fairShare`: the head of the lane whose turn it is, once its credit covers the head; a lane
   * whose credit does not cover its head passes the turn on, keeping its credit. After a whole
   * round without a grant the rounds in which none could come are added at once (`skipRounds`),
   * so a grant takes a round or two of turns however small the weights.
   */
  private nextFair(): Lane<T> | undefined {
    let passed = 0
    for (;;) {
      const lane = this.turn
      if (lane?.head === undefined) return undefined
      if (!this.turnStarted) {
        lane.credit += lane.weight
        this.turnStarted = true
      }
      if (lane.head.cost <= lane.credit) return lane
      this.turn = lane.nextBusy
      this.turnStarted = false
      if (++passed >= this.busyLanes) {
        this.skipRounds()
        passed = 0
      }
    }
  }

  /**
   * `fairShare`, after a whole round in which no lane's credit covered its head: the rounds after
   * it that end no better, the fewest ⌈(head − credit) / weight⌉ − 1 over the busy lanes, added to
   * every credit in one pass (the Lua of the fleet does the same sums, to the bit).
   */
  private skipRounds(): void {
    const first = this.turn
    if (first === undefined) return
    let rounds = Infinity
    let lane = first
    do {
      if (lane.head === undefined || lane.nextBusy === undefined) return
      rounds = Math.min(rounds, Math.ceil((lane.head.cost - lane.credit) / lane.weight) - 1)
      lane = lane.nextBusy
    } while (lane !== first)
    if (rounds <= 0) return
    do {
      lane.credit += rounds * lane.weight
      lane = lane.nextBusy ?? first
    } while (lane !== first)
  }

  private joinRound(lane: Lane<T>): void {
    this.busyLanes++
    lane.busy = true
    lane.credit = 0
    const current = this.turn
    if (current === undefined) {
      lane.prevBusy = lane.nextBusy = lane
      this.turn = lane
      this.turnStarted = false
      return
    }
    // last in the round: just before the lane whose turn it is
    const last = current.prevBusy ?? current
    lane.nextBusy = current
    lane.prevBusy = last
    last.nextBusy = lane
    current.prevBusy = lane
  }

  private leaveRound(lane: Lane<T>): void {
    this.busyLanes--
    lane.busy = false
    lane.credit = 0
    const { nextBusy: next, prevBusy: prev } = lane
    if (next === lane || next === undefined || prev === undefined) {
      this.turn = undefined
    } else {
      prev.nextBusy = next
      next.prevBusy = prev
      if (this.turn === lane) {
        this.turn = next
        this.turnStarted = false
      }
    }
    lane.prevBusy = lane.nextBusy = undefined
  }

  private unlink(ticket: T, lane: Lane<T>): void {
    if (ticket.prev === undefined) lane.head = ticket.next
    else ticket.prev.next = ticket.next
    if (ticket.next === undefined) lane.tail = ticket.prev
    else ticket.next.prev = ticket.prev
    ticket.prev = ticket.next = undefined
    lane.waiting--
    lane.waitingPermits -= ticket.cost
    this.waiting--
    this.waitingPermits -= ticket.cost
    if (this.fair && lane.waiting === 0) this.leaveRound(lane)
    this.hooks.waiting(lane)
  }
}
