/**
 * A circuit breaker's state machine on plain numbers: which calls it admits, and how their
 * outcomes open and close the circuit. Times are milliseconds passed in as `now`; the binding owns
 * the clock, the interruption mask and the watch on each call's end.
 *
 * @since 0.1.0
 */

/**
 * The breaker's state machine, synchronous (one JavaScript thread, so each step is atomic). Times
 * are milliseconds on the caller's clock.
 *
 * - closed: calls pass; failures are counted (consecutive, or the ratio over the last `window`
 *   calls); reaching the threshold opens the circuit.
 * - open: calls are refused at once until `openForMillis` has passed.
 * - half-open: exactly one call (the probe) passes; its success closes the circuit, its failure
 *   opens it again. A probe refused before it reached the upstream (bulkhead, limiter) or
 *   interrupted proves nothing: the next call becomes the probe.
 *
 * @since 0.1.0
 * @category models
 */
export interface BreakerSettings {
  readonly consecutiveFailures: number | undefined
  readonly ratio: number | undefined
  readonly window: number
  readonly minimumCalls: number
  readonly openForMillis: number
}

/**
 * `closed`: calls pass; `open`: calls are refused; `half-open`: one probe passes.
 *
 * @since 0.1.0
 * @category models
 */
export type State = "closed" | "open" | "half-open"

/**
 * A call admitted (`probe`: it is the half-open circuit's one probe), or refused with the numbers
 * of the refusal.
 *
 * @since 0.1.0
 * @category models
 */
export type Admission =
  | { readonly _tag: "Pass"; readonly probe: boolean }
  | {
    readonly _tag: "Refuse"
    readonly state: "open" | "half-open"
    readonly failures: number
    readonly openedForMillis: number
    readonly retryAfterMillis: number
  }

const pass: Admission = { _tag: "Pass", probe: false }
const passProbe: Admission = { _tag: "Pass", probe: true }

/**
 * One breaker's state, owned by one binding instance; `onChange` hears every transition (the
 * binding's gauge).
 *
 * @since 0.1.0
 * @category models
 */
export class BreakerState {
  state: State = "closed"
  openedAt = 0
  openingFailures = 0
  probing = false
  consecutive = 0
  // the ratio window: a ring of the last `window` outcomes
  private readonly outcomes: Array<boolean>
  private next = 0
  private filled = 0
  private failuresInWindow = 0

  constructor(
    readonly settings: BreakerSettings,
    readonly onChange: (state: State) => void
  ) {
    this.outcomes = new Array<boolean>(settings.ratio === undefined ? 0 : settings.window).fill(false)
  }

  admit(now: number): Admission {
    if (this.state === "closed") return pass
    if (this.state === "open") {
      const elapsed = now - this.openedAt
      if (elapsed < this.settings.openForMillis) {
        return {
          _tag: "Refuse",
          state: "open",
          failures: this.openingFailures,
          openedForMillis: elapsed,
          retryAfterMillis: this.settings.openForMillis - elapsed
        }
      }
      this.transition("half-open")
    }
    if (this.probing) {
      return {
        _tag: "Refuse",
        state: "half-open",
        failures: this.openingFailures,
        openedForMillis: now - this.openedAt,
        retryAfterMillis: 0
      }
    }
    this.probing = true
    return passProbe
  }

  onSuccess(probe: boolean): void {
    if (probe) {
      this.probing = false
      this.reset()
      this.transition("closed")
      return
    }
    if (this.state !== "closed") return
    this.consecutive = 0
    this.record(false)
  }

  onFailure(probe: boolean, now: number): void {
    if (probe) {
      this.probing = false
      this.open(now, this.openingFailures)
      return
    }
    // a call admitted before the circuit opened, ending after: the circuit already knows
    if (this.state !== "closed") return
    this.consecutive++
    this.record(true)
    const { consecutiveFailures, minimumCalls, ratio } = this.settings
    if (consecutiveFailures !== undefined && this.consecutive >= consecutiveFailures) {
      this.open(now, this.consecutive)
    } else if (ratio !== undefined && this.filled >= minimumCalls && this.failuresInWindow / this.filled >= ratio) {
      this.open(now, this.failuresInWindow)
    }
  }

  /** The failures counted towards opening: consecutive, and over the ratio window. */
  get counts(): { readonly consecutive: number; readonly calls: number; readonly failures: number } {
    return { consecutive: this.consecutive, calls: this.filled, failures: this.failuresInWindow }
  }

  /** The call ended without reaching the upstream (refused, or interrupted): it proves nothing. */
  onNeutral(probe: boolean): void {
    if (probe) this.probing = false
  }

  /** A call admitted at `admit` ended at `now`, as `judgement` reads its end. */
  settle(probe: boolean, judgement: Judgement, now: number): void {
    if (judgement === "success") this.onSuccess(probe)
    else if (judgement === "failure") this.onFailure(probe, now)
    else this.onNeutral(probe)
  }

  private record(failure: boolean): void {
    const size = this.outcomes.length
    if (size === 0) return
    if (this.filled === size) {
      if (this.outcomes[this.next]) this.failuresInWindow--
    } else {
      this.filled++
    }
    this.outcomes[this.next] = failure
    if (failure) this.failuresInWindow++
    this.next = (this.next + 1) % size
  }

  private reset(): void {
    this.consecutive = 0
    this.outcomes.fill(false)
    this.next = 0
    this.filled = 0
    this.failuresInWindow = 0
  }

  private open(now: number, failures: number): void {
    this.openedAt = now
    this.openingFailures = failures
    this.reset()
    this.transition("open")
  }

  private transition(state: State): void {
    if (this.state === state) return
    this.state = state
    this.onChange(state)
  }
}

/**
 * How a call run through a breaker ended, for the circuit: a success closes a half-open one, a
 * failure counts towards opening it, a neutral ending (an interruption, a refusal before the
 * upstream was reached) proves nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type Judgement = "success" | "failure" | "neutral"
