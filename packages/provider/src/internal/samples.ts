/** @internal */

/**
 * The last `size` values of one phase, in a ring: the mean, p50 and p95 of recent calls, exact, in
 * memory bounded by `size` (Effect's histograms give buckets, not exact quantiles).
 *
 * @internal
 */
export class Samples {
  protected readonly values: Float64Array
  protected next = 0
  protected filled = 0

  constructor(size: number) {
    this.values = new Float64Array(size)
  }

  add(value: number): void {
    this.values[this.next] = value
    this.next = (this.next + 1) % this.values.length
    if (this.filled < this.values.length) this.filled++
  }

  summary(): {
    readonly count: number
    readonly meanMillis: number
    readonly p50Millis: number
    readonly p95Millis: number
  } {
    if (this.filled === 0) return { count: 0, meanMillis: 0, p50Millis: 0, p95Millis: 0 }
    const sorted = this.values.slice(0, this.filled).sort()
    let sum = 0
    for (let i = 0; i < sorted.length; i++) sum += sorted[i]
    // nearest rank: the smallest value at or above that share of the samples
    const rank = (share: number) => sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)]
    return { count: sorted.length, meanMillis: sum / sorted.length, p50Millis: rank(0.5), p95Millis: rank(0.95) }
  }
}

/**
 * The instants of the last `size` call starts, in a ring: the rate calls started at lately.
 *
 * @internal
 */
export class StartTimes extends Samples {
  /** Starts per second from the oldest start kept to the newest; 0 with fewer than two. */
  ratePerSecond(): number {
    if (this.filled < 2) return 0
    const size = this.values.length
    const newest = this.values[(this.next - 1 + size) % size]
    const oldest = this.values[this.filled < size ? 0 : this.next]
    return newest > oldest ? ((this.filled - 1) * 1000) / (newest - oldest) : Number.POSITIVE_INFINITY
  }
}
