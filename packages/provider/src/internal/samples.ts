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

/**
 * Units charged per dimension by recent starts (estimates at the start, corrections when they
 * settle), each in a ring of the last `size` entries: the rate each dimension is used at lately,
 * for the verdict to name the one nearest its limit.
 *
 * @internal
 */
export class DimensionUsage {
  private readonly rings = new Map<string, { at: Float64Array; units: Float64Array; next: number; filled: number }>()

  constructor(readonly dimensions: ReadonlyArray<string>, private readonly size: number) {
    for (const dimension of dimensions) {
      this.rings.set(dimension, { at: new Float64Array(size), units: new Float64Array(size), next: 0, filled: 0 })
    }
  }

  add(dimension: string, at: number, units: number): void {
    const ring = this.rings.get(dimension)
    if (ring === undefined || units === 0) return
    ring.at[ring.next] = at
    ring.units[ring.next] = units
    ring.next = (ring.next + 1) % this.size
    if (ring.filled < this.size) ring.filled++
  }

  /** A start's estimate: a number on every dimension, a record on those it names. */
  started(at: number, cost: number | Readonly<Record<string, number>>): void {
    for (const dimension of this.dimensions) {
      this.add(dimension, at, typeof cost === "number" ? cost : cost[dimension] ?? 0)
    }
  }

  /**
   * Units per second from the oldest entry kept to the newest, the oldest's own units excluded
   * (as `StartTimes` counts starts); 0 with fewer than two entries or none apart in time.
   */
  ratePerSecond(dimension: string): number {
    const ring = this.rings.get(dimension)
    if (ring === undefined || ring.filled < 2) return 0
    const oldest = ring.filled < this.size ? 0 : ring.next
    const newest = (ring.next - 1 + this.size) % this.size
    let sum = 0
    for (let i = 0; i < ring.filled; i++) if (i !== oldest) sum += ring.units[i]
    const span = ring.at[newest] - ring.at[oldest]
    return span > 0 ? (Math.max(0, sum) * 1000) / span : 0
  }

  /** The time the rate is measured over: from the oldest entry kept to the newest. */
  spanMillis(dimension: string): number {
    const ring = this.rings.get(dimension)
    if (ring === undefined || ring.filled < 2) return 0
    const oldest = ring.filled < this.size ? 0 : ring.next
    return ring.at[(ring.next - 1 + this.size) % this.size] - ring.at[oldest]
  }
}

/**
 * Permit waits per bulkhead lane: attempts granted in each lane since the provider was made, and
 * the waits of its last `size`. Made only for a bulkhead with lanes, so it holds no more lanes
 * than the bulkhead does.
 *
 * @internal
 */
export class LaneWaits {
  readonly lanes = new Map<string, { attempts: number; readonly waits: Samples }>()

  constructor(private readonly defaultLane: string, private readonly size: number) {}

  add(lane: string | undefined, waitMillis: number): void {
    const name = lane ?? this.defaultLane
    let entry = this.lanes.get(name)
    if (entry === undefined) {
      entry = { attempts: 0, waits: new Samples(this.size) }
      this.lanes.set(name, entry)
    }
    entry.attempts++
    entry.waits.add(waitMillis)
  }
}
