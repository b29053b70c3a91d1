/**
 * The in-memory limiter store on plain numbers: per key, the state of each limit, its pause and its
 * ledger, each operation at the `now` its binding read. One instance is owned by one store of a
 * binding, which wraps each call in its effect and logs what it ignored.
 *
 * @since 0.1.0
 */
import {
  commitAll,
  earliestAll,
  EPSILON_MILLIS,
  initialState,
  type LimitSpec,
  type LimitState,
  postpone,
  restorePoint,
  rollbackAll
} from "./Algorithm.js"
import * as Ledger from "./Ledger.js"
import { settleAll, tighten } from "./Settlement.js"

/**
 * Units on the limits of one key: `costs[i]` on limit `i`, or `cost` on every limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Charge {
  readonly key: string
  readonly limits: ReadonlyArray<LimitSpec>
  readonly cost: number
  readonly costs?: ReadonlyArray<number> | undefined
}

/**
 * A start to decide within `maxWaitMillis`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReserveRequest extends Charge {
  readonly maxWaitMillis: number
}

/**
 * What `reserve` answers: a start after `delayMillis` (`restore` is what `refund` and `settle`
 * read), or a refusal `retryAfterMillis` beyond the caller's wait, by the limit at index
 * `binding` (-1: by the key's pause).
 *
 * @since 0.1.0
 * @category models
 */
export type ReserveResult =
  | {
    readonly _tag: "Reserved"
    readonly delayMillis: number
    readonly reservation: number
    readonly pausedMillis: number
    readonly restore: ReadonlyArray<number>
  }
  | {
    readonly _tag: "Refused"
    readonly delayMillis: number
    readonly retryAfterMillis: number
    readonly binding: number
  }

/**
 * A refusal of `reserve`.
 *
 * @since 0.1.0
 * @category models
 */
export type Refused = Extract<ReserveResult, { readonly _tag: "Refused" }>

/**
 * A reservation to take back (`restore` as `reserve` answered it), or a started one to correct
 * from its `reserved` units per limit to its `actual` usage.
 *
 * @since 0.1.0
 * @category models
 */
export type Correction =
  | Charge & { readonly reservation: number; readonly restore?: ReadonlyArray<number> | undefined }
  | {
    readonly key: string
    readonly limits: ReadonlyArray<LimitSpec>
    readonly restore?: ReadonlyArray<number> | undefined
    readonly reserved: ReadonlyArray<number>
    readonly actual: ReadonlyArray<number>
  }

/**
 * @since 0.1.0
 * @category models
 */
export type RefundRequest = Extract<Correction, { readonly cost: number }>

/**
 * @since 0.1.0
 * @category models
 */
export type SettleRequest = Extract<Correction, { readonly actual: ReadonlyArray<number> }>

/**
 * What an upstream said of limit `limit` (an index of the limits), already checked by the binding.
 *
 * @since 0.1.0
 * @category models
 */
export interface Observation {
  readonly limit: number
  readonly remaining: number
  readonly resetAfterMillis: number
}

interface KeyState {
  specs: ReadonlyArray<LimitSpec>
  states: Array<LimitState>
  /** The cooldown set by `pause`, as an instant of the binding's clock (never leaves the store). */
  pauseUntil: number
  /** Which reservations can still be taken back. Ids are never reused. */
  readonly ledger: Ledger.Ledger
}

const costsOf = (
  request: {
    readonly limits: ReadonlyArray<LimitSpec>
    readonly cost: number
    readonly costs?: ReadonlyArray<number> | undefined
  }
): ReadonlyArray<number> => request.costs ?? request.limits.map(() => request.cost)

const sameSpec = (a: LimitSpec, b: LimitSpec): boolean =>
  a.algorithm === b.algorithm && a.limit === b.limit && a.windowMillis === b.windowMillis && a.burst === b.burst

/**
 * Keeps the state of each limit while its parameters stay the same; a limit whose parameters
 * changed starts afresh (its old state measures something else).
 */
const alignSpecs = (state: KeyState, specs: ReadonlyArray<LimitSpec>): void => {
  if (state.specs === specs) return
  const states: Array<LimitState> = []
  for (let i = 0; i < specs.length; i++) {
    const old = state.specs[i]
    states.push(old !== undefined && sameSpec(old, specs[i]) ? state.states[i] : initialState(specs[i]))
  }
  state.specs = specs
  state.states = states
}

/**
 * The store's state machine: every method decides at the `now` it is given and reads no clock.
 *
 * @since 0.1.0
 * @category constructors
 */
export class MemoryStore {
  private readonly keys = new Map<string, KeyState>()

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key)
    if (state === undefined) {
      state = { specs: [], states: [], pauseUntil: Number.NEGATIVE_INFINITY, ledger: Ledger.make(0) }
      this.keys.set(key, state)
    }
    return state
  }

  /**
   * Decides one start atomically: every limit charged, or none when the wait is beyond `maxWaitMillis`.
   *
   * @since 0.1.0
   */
  reserve(request: ReserveRequest, now: number): ReserveResult {
    const state = this.stateOf(request.key)
    alignSpecs(state, request.limits)
    const from = Math.max(now, state.pauseUntil)
    const costs = costsOf(request)
    const { binding, start } = earliestAll(request.limits, state.states, from, costs)
    const delayMillis = Math.max(0, start - now)
    if (delayMillis > request.maxWaitMillis + EPSILON_MILLIS) {
      return { _tag: "Refused", delayMillis, retryAfterMillis: delayMillis - request.maxWaitMillis, binding }
    }
    const restore = [start]
    for (let i = 0; i < request.limits.length; i++) {
      restore.push(restorePoint(request.limits[i], state.states[i], now))
    }
    commitAll(request.limits, state.states, now, start, costs)
    return {
      _tag: "Reserved",
      delayMillis,
      reservation: Ledger.reserve(state.ledger),
      pausedMillis: Math.max(0, state.pauseUntil - now),
      restore
    }
  }

  /**
   * Takes a reservation back where the ledger still allows it; answers whether anything came back.
   *
   * @since 0.1.0
   */
  refund(request: RefundRequest, now: number): boolean {
    const state = this.keys.get(request.key)
    if (state === undefined) return false
    const steps = Ledger.cancel(state.ledger, request.reservation, costsOf(request), request.restore, now)
    if (steps.length === 0) return false
    alignSpecs(state, request.limits)
    for (const step of steps) rollbackAll(request.limits, state.states, now, step.costs, step.points)
    return true
  }

  /**
   * Settles a started reservation to its actual usage.
   *
   * @since 0.1.0
   */
  settle(request: SettleRequest, now: number): void {
    const state = this.keys.get(request.key)
    if (state === undefined) return
    alignSpecs(state, request.limits)
    const debt = settleAll(
      request.limits,
      state.states,
      now,
      request.restore?.[0],
      request.reserved,
      request.actual,
      request.restore?.slice(1)
    )
    // A window's roll back restores a count taken before the debt: it must not erase it.
    if (debt) Ledger.seal(state.ledger)
  }

  /**
   * Tightens each observed limit of `key` to what its upstream said.
   *
   * @since 0.1.0
   */
  tighten(key: string, limits: ReadonlyArray<LimitSpec>, observations: ReadonlyArray<Observation>, now: number): void {
    const state = this.stateOf(key)
    alignSpecs(state, limits)
    for (const observation of observations) {
      const i = observation.limit
      tighten(limits[i], state.states[i], now, observation.remaining, observation.resetAfterMillis)
    }
  }

  /**
   * Holds every start of `key` until `now + millis`; a shorter pause than the current one changes nothing.
   *
   * @since 0.1.0
   */
  pause(key: string, millis: number, now: number): void {
    const state = this.stateOf(key)
    const until = now + millis
    const extension = until - Math.max(now, state.pauseUntil)
    if (extension <= 0) return
    for (let i = 0; i < state.states.length; i++) {
      postpone(state.specs[i], state.states[i], now, extension)
    }
    state.pauseUntil = until
  }

  /**
   * Milliseconds left of `key`'s pause, 0 when none.
   *
   * @since 0.1.0
   */
  readPause(key: string, now: number): number {
    const state = this.keys.get(key)
    return state === undefined ? 0 : Math.max(0, state.pauseUntil - now)
  }
}
