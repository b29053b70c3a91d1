/**
 * Which reservations of a key can still be taken back, on plain numbers: the rule the memory store
 * runs and the Redis store's refund script transcribes.
 *
 * Reservation ids grow by one per reservation. Those in (`floor`, `latest`] are stacked last in the
 * limits' state, in id order: taking back `latest` cannot add a start to any window, since nothing
 * was decided on top of it. A reservation cancelled below the top cannot go at once; it is
 * remembered (consecutive ones merged into one run), and when the top goes, the run just below it
 * goes too, and so on down the stack: a mass cancellation gives every slot back once the latest
 * reservation goes, whatever the order of the cancellations.
 *
 * A reservation made after a roll back (`latest` below the last id given) seals everything below
 * it (`floor` rises): the ids between were taken back and the stack is no longer consecutive.
 * Cancelled runs are forgotten once their starts are past (rolling back over them would gain
 * nothing now), once sealed, and beyond `MAX_CANCELLED_RUNS`: forgetting loses slots, never the
 * quota.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export interface Ledger {
  /** The id given to the last reservation. */
  lastId: number
  /** The top of the stack of reservations that can be taken back. */
  latest: number
  /** Ids up to this one can no longer be taken back. */
  floor: number
  /** Cancelled runs below `latest`, ordered by id, none adjacent to another. */
  cancelled: Array<CancelledRun>
}

/**
 * Consecutive cancelled reservations `lo..hi`.
 *
 * @since 0.1.0
 */
export interface CancelledRun {
  readonly lo: number
  readonly hi: number
  /** Their units in all, per limit. */
  readonly costs: ReadonlyArray<number>
  /** When the last of them would have started. */
  readonly at: number
  /** The restore points taken before `lo` was reserved, one per limit. */
  readonly points: ReadonlyArray<number>
}

/**
 * What a reservation hands back for a refund: when it starts, then the restore point of each
 * limit taken before it.
 *
 * @since 0.1.0
 */
export type Restore = ReadonlyArray<number>

/**
 * One step of a roll back: `costs` units per limit, to the state before the reservation whose restore
 * points are `points` (when known).
 *
 * @since 0.1.0
 */
export interface Rollback {
  readonly costs: ReadonlyArray<number>
  readonly points: ReadonlyArray<number> | undefined
}

/**
 * Seals every reservation made so far: none can be taken back any more (a settle charged a debt
 * on top of them, which a roll back must not erase).
 *
 * @since 0.1.0
 */
export const seal = (ledger: Ledger): void => {
  ledger.floor = ledger.lastId
  ledger.latest = ledger.lastId
  ledger.cancelled = []
}

/**
 * Cancelled runs remembered per key at most: a random order of cancellations makes at most one
 * run per two reservations, so this covers any order for 2,048 queued reservations.
 *
 * @since 0.1.0
 */
export const MAX_CANCELLED_RUNS = 1024

/** @since 0.1.0 */
export const make = (firstId: number): Ledger => ({ lastId: firstId, latest: firstId, floor: firstId, cancelled: [] })

/**
 * Gives the next id.
 *
 * @since 0.1.0
 */
export const reserve = (ledger: Ledger): number => {
  if (ledger.latest !== ledger.lastId) {
    ledger.floor = ledger.lastId
    ledger.cancelled = []
  }
  ledger.lastId += 1
  ledger.latest = ledger.lastId
  return ledger.lastId
}

const indexOf = (runs: ReadonlyArray<CancelledRun>, id: number): number => {
  let lo = 0
  let hi = runs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (runs[mid].hi < id) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Drops what can no longer be reached or is not worth a roll back any more. */
const prune = (ledger: Ledger, now: number): void => {
  const kept = ledger.cancelled.filter((run) => run.hi < ledger.latest && run.lo > ledger.floor && run.at > now)
  if (kept.length !== ledger.cancelled.length) ledger.cancelled = kept
}

/**
 * Cancels reservation `id` of `costs` units per limit: answers the roll back to apply to the limits, in order
 * (empty when nothing goes back now; the reservation may be remembered for later).
 *
 * @since 0.1.0
 */
export const cancel = (
  ledger: Ledger,
  id: number,
  costs: ReadonlyArray<number>,
  restore: Restore | undefined,
  now: number
): ReadonlyArray<Rollback> => {
  prune(ledger, now)
  if (id <= ledger.floor || id > ledger.latest) return []
  const runs = ledger.cancelled
  const i = indexOf(runs, id)
  if (i < runs.length && runs[i].lo <= id) return []
  if (id === ledger.latest) {
    const steps: Array<Rollback> = [{ costs, points: restore?.slice(1) }]
    ledger.latest = id - 1
    const below = runs[runs.length - 1]
    if (below !== undefined && below.hi === ledger.latest) {
      runs.pop()
      steps.push({ costs: below.costs, points: below.points })
      ledger.latest = below.lo - 1
    }
    return steps
  }
  if (restore === undefined || !(restore[0] > now)) return []
  const prev = i > 0 ? runs[i - 1] : undefined
  const next = i < runs.length ? runs[i] : undefined
  const joinsPrev = prev !== undefined && prev.hi === id - 1
  const joinsNext = next !== undefined && next.lo === id + 1
  const run: CancelledRun = {
    lo: joinsPrev ? prev.lo : id,
    hi: joinsNext ? next.hi : id,
    costs: costs.map((cost, i) => cost + (joinsPrev ? prev.costs[i] : 0) + (joinsNext ? next.costs[i] : 0)),
    at: joinsNext ? next.at : restore[0],
    points: joinsPrev ? prev.points : restore.slice(1)
  }
  runs.splice(joinsPrev ? i - 1 : i, (joinsPrev ? 1 : 0) + (joinsNext ? 1 : 0), run)
  if (runs.length > MAX_CANCELLED_RUNS) runs.shift()
  return []
}
