/**
 * The lane scripts' state as the test expects it (RFC 0004, the fleet): every waiting ticket with
 * its lane, due time and cost, the holders and the permits granted per lane; the policy's choices
 * are `LaneQueue`'s own (core), so the Lua is checked against the in-process bulkhead's rules, its
 * round, turn and credits included.
 */
import type { Lane } from "@sluice/core/LaneQueue"
import { LaneQueue, LaneTicket, type Policy } from "@sluice/core/LaneQueue"

export interface Waiting {
  readonly member: string
  readonly ticket: number
  readonly cost: number
  readonly lane: string
  /** Its due time; `exact` when the test set it (a fresh one is the script's clock + yieldFor). */
  due: number
  exact: boolean
}

export type ModelPolicy =
  | { readonly _tag: "priority"; readonly lanes: ReadonlyArray<readonly [string, number]> }
  | { readonly _tag: "fairShare"; readonly defaultWeight: number; readonly weights: ReadonlyMap<string, number> }

class MemberTicket extends LaneTicket {
  constructor(readonly waiting: Waiting) {
    super(waiting.cost)
  }
}

const policyOf = (policy: ModelPolicy): Policy =>
  policy._tag === "priority"
    ? { _tag: "priority", lanes: policy.lanes.map(([name, yieldForMillis]) => ({ name, yieldForMillis })) }
    : { _tag: "fairShare", defaultWeight: policy.defaultWeight, weights: policy.weights }

export class LaneModel {
  queue: Array<Waiting> = []
  held = new Map<string, number>()
  grantedTo = new Map<string, number>()
  private readonly lanes: LaneQueue<MemberTicket>
  private readonly tickets = new Map<string, MemberTicket>()
  private grants: Array<string> = []

  constructor(public permits: number, readonly policy: ModelPolicy) {
    this.lanes = new LaneQueue<MemberTicket>(permits, policyOf(policy), {
      granted: (ticket) => {
        const t = ticket.waiting
        this.queue = this.queue.filter((w) => w !== t)
        this.tickets.delete(t.member)
        this.held.set(t.member, t.cost)
        this.grantedTo.set(t.lane, (this.grantedTo.get(t.lane) ?? 0) + t.cost)
        this.grants.push(t.member)
      },
      inFlight: () => {},
      waiting: () => {}
    })
  }

  get fair(): boolean {
    return this.policy._tag === "fairShare"
  }
  get used(): number {
    let sum = 0
    for (const cost of this.held.values()) sum += cost
    return sum
  }
  get wanted(): number {
    return this.queue.reduce((sum, t) => sum + t.cost, 0)
  }
  yieldOf(lane: string): number {
    return this.policy._tag === "priority" ? this.policy.lanes.find(([name]) => name === lane)?.[1] ?? 0 : 0
  }
  /** The lane's tickets, oldest first. */
  inLane(lane: string): Array<Waiting> {
    return this.queue.filter((t) => t.lane === lane).sort((a, b) => a.ticket - b.ticket)
  }
  seen(lane: string): void {
    if (!this.grantedTo.has(lane)) this.grantedTo.set(lane, 0)
  }

  /** The busy lanes in round order, the turn's first (`LaneQueue`'s ring). */
  get round(): Array<string> {
    const out: Array<string> = []
    const first = this.lanes["turn"]
    let lane: Lane<MemberTicket> | undefined = first
    while (lane !== undefined) {
      out.push(lane.name)
      lane = lane.nextBusy === first ? undefined : lane.nextBusy
    }
    return out
  }
  get started(): boolean {
    return this.round.length > 0 && this.lanes["turnStarted"]
  }
  creditOf(lane: string): number {
    return this.lanes.lanes.get(lane)?.credit ?? 0
  }

  /** `LaneQueue` counts the permits the test holds, and K. */
  private sync(): void {
    this.lanes.inFlight = this.used
    this.lanes.permits = this.permits
  }

  /** A ticket queues; its lane's due time is the ticket's (the script's clock). */
  enqueue(t: Waiting): void {
    this.queue.push(t)
    const ticket = new MemberTicket(t)
    this.tickets.set(t.member, ticket)
    this.sync()
    // LaneQueue grants what fits as it queues: the next `grant` returns it, as the script's does
    this.lanes.enqueue(ticket, this.lanes.laneOf(t.lane)!, t.due - this.yieldOf(t.lane))
  }

  /** The due time the script gave (or the test set) a waiting ticket. */
  setDue(t: Waiting, due: number): void {
    t.due = due
    const ticket = this.tickets.get(t.member)
    if (ticket !== undefined) ticket.due = due
  }

  /** A waiting ticket leaves without a grant; false if it was not waiting. */
  dequeue(member: string): boolean {
    const t = this.queue.find((w) => w.member === member)
    const ticket = this.tickets.get(member)
    if (t === undefined || ticket === undefined) return false
    this.queue = this.queue.filter((w) => w !== t)
    this.tickets.delete(member)
    this.lanes.leave(ticket)
    return true
  }

  /** The script's grant(): `LaneQueue.dispatch` on the permits the test holds. */
  grant(): Array<string> {
    this.sync()
    this.lanes.dispatch()
    const granted = this.grants
    this.grants = []
    return granted
  }
}
