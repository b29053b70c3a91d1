/**
 * A reference model of the lane scripts' state (RFC 0004, the fleet): every waiting ticket with its
 * lane, due time and cost, the holders, and for a fair share the round of busy lanes, whose turn
 * has had its weight, and the credits. `grant` recomputes the policy's choice from the whole queue:
 * the earliest due lane head, ties to the higher lane (priority); deficit round-robin (fair share).
 */

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

export class LaneModel {
  queue: Array<Waiting> = []
  held = new Map<string, number>()
  round: Array<string> = []
  started = false
  credit = new Map<string, number>()
  grantedTo = new Map<string, number>()
  constructor(public permits: number, readonly policy: ModelPolicy) {}

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
  weightOf(lane: string): number {
    return this.policy._tag === "fairShare" ? this.policy.weights.get(lane) ?? this.policy.defaultWeight : 1
  }
  /** The lane's tickets, oldest first. */
  inLane(lane: string): Array<Waiting> {
    return this.queue.filter((t) => t.lane === lane).sort((a, b) => a.ticket - b.ticket)
  }
  seen(lane: string): void {
    if (!this.grantedTo.has(lane)) this.grantedTo.set(lane, 0)
  }

  enqueue(t: Waiting): void {
    this.queue.push(t)
    if (this.fair && this.inLane(t.lane).length === 1) {
      this.round.push(t.lane)
      if (this.round.length === 1) this.started = false
      this.credit.set(t.lane, 0)
    }
  }

  /** A waiting ticket leaves without a grant; false if it was not waiting. */
  dequeue(member: string): boolean {
    const t = this.queue.find((w) => w.member === member)
    if (t === undefined) return false
    this.queue = this.queue.filter((w) => w !== t)
    this.laneEmptied(t.lane)
    return true
  }

  private laneEmptied(lane: string): void {
    if (!this.fair || this.inLane(lane).length > 0) return
    const i = this.round.indexOf(lane)
    if (i >= 0) {
      this.round.splice(i, 1)
      if (i === 0) this.started = false
    }
    this.credit.delete(lane)
  }

  private nextDue(): Waiting | undefined {
    if (this.policy._tag !== "priority") return undefined
    let best: Waiting | undefined
    for (const [lane] of this.policy.lanes) {
      const head = this.inLane(lane)[0]
      if (head !== undefined && (best === undefined || head.due < best.due)) best = head
    }
    return best
  }

  private nextFair(): Waiting | undefined {
    let passed = 0
    for (;;) {
      const lane = this.round[0]
      if (lane === undefined) return undefined
      if (!this.started) {
        this.credit.set(lane, (this.credit.get(lane) ?? 0) + this.weightOf(lane))
        this.started = true
      }
      const head = this.inLane(lane)[0]
      if (head.cost <= (this.credit.get(lane) ?? 0)) return head
      this.round.push(this.round.shift()!)
      this.started = false
      if (++passed >= this.round.length) {
        // a whole round without a grant: the rounds that end no better, added at once
        const rounds = Math.min(
          ...this.round.map((l) =>
            Math.ceil((this.inLane(l)[0].cost - (this.credit.get(l) ?? 0)) / this.weightOf(l)) - 1
          )
        )
        if (rounds > 0) {
          for (const l of this.round) this.credit.set(l, (this.credit.get(l) ?? 0) + rounds * this.weightOf(l))
        }
        passed = 0
      }
    }
  }

  /** The script's grant(): while something is wanted and a permit is free, the policy's next ticket if it fits. */
  grant(): Array<string> {
    const granted: Array<string> = []
    while (this.wanted > 0 && this.used < this.permits) {
      const head = this.fair ? this.nextFair() : this.nextDue()
      if (head === undefined || this.used + head.cost > this.permits) break
      if (this.fair) this.credit.set(head.lane, (this.credit.get(head.lane) ?? 0) - head.cost)
      this.queue = this.queue.filter((w) => w !== head)
      this.laneEmptied(head.lane)
      this.held.set(head.member, head.cost)
      this.grantedTo.set(head.lane, (this.grantedTo.get(head.lane) ?? 0) + head.cost)
      granted.push(head.member)
    }
    return granted
  }
}
