/**
 * A retry budget's sliding window on plain numbers: first attempts and retries counted per slice
 * of the window, and how many retries it allows. Times are milliseconds passed in as `now`; the
 * binding owns the clock and the refusal.
 *
 * @since 0.1.0
 */

/**
 * How many slices the retry budget's window is cut into: the window slides one slice at a time,
 * so the count is exact to a tenth of the window, and the state is twenty numbers whatever the rate.
 */
const SLICES = 10

/**
 * @since 0.1.0
 * @category models
 */
export interface RetryBudgetSettings {
  /** Retries allowed per first attempt in the window (0.1: at most 10 % extra calls). */
  readonly ratio: number
  /** Retries always allowed per window, so that a quiet provider can still retry. */
  readonly minRetries: number
  readonly windowMillis: number
}

/**
 * The window's counts, and how many retries it allows.
 *
 * @since 0.1.0
 * @category models
 */
export interface Window {
  readonly firsts: number
  readonly retries: number
  readonly allowed: number
}

/**
 * First attempts and retries over a sliding window; a retry is allowed while the retries in the
 * window stay below `max(minRetries, ratio × first attempts)`. Owned by one binding instance.
 *
 * @since 0.1.0
 * @category models
 */
export class RetryBudgetState {
  private readonly firsts = new Array<number>(SLICES).fill(0)
  private readonly retries = new Array<number>(SLICES).fill(0)
  private slice = Number.NEGATIVE_INFINITY
  private readonly sliceMillis: number

  constructor(readonly settings: RetryBudgetSettings) {
    this.sliceMillis = settings.windowMillis / SLICES
  }

  private rotate(now: number): number {
    const slice = Math.floor(now / this.sliceMillis)
    if (slice > this.slice) {
      // clear the slices entered since the last call (all of them after a whole window of silence)
      const entered = Math.min(SLICES, slice - this.slice)
      for (let i = 0; i < entered; i++) {
        const at = (slice - i) % SLICES
        this.firsts[at] = 0
        this.retries[at] = 0
      }
      this.slice = slice
    }
    return this.slice % SLICES
  }

  recordFirst(now: number): void {
    this.firsts[this.rotate(now)]++
  }

  recordRetry(now: number): void {
    this.retries[this.rotate(now)]++
  }

  /** The window's counts at `now`, and how many retries it allows. */
  check(now: number): Window {
    this.rotate(now)
    let firsts = 0
    let retries = 0
    for (let i = 0; i < SLICES; i++) {
      firsts += this.firsts[i]
      retries += this.retries[i]
    }
    const allowed = Math.max(this.settings.minRetries, Math.floor(this.settings.ratio * firsts))
    return { firsts, retries, allowed }
  }

  /** The window at `now` when it affords no more retries, else `undefined`. */
  exhausted(now: number): Window | undefined {
    const window = this.check(now)
    return window.retries < window.allowed ? undefined : window
  }
}
