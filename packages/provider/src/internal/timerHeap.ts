/**
 * A binary min-heap of timed entries: the earliest instant first, equal instants in the order they
 * were set. Each entry keeps its own position, so that it can be moved or removed in O(log n)
 * when its call ends before its instant. Imports nothing from Effect.
 *
 * @internal
 */

/** @internal */
export interface Timed {
  /** The instant the entry is due, in milliseconds; meaningful only while `index ≥ 0`. */
  at: number
  /** Breaks ties between equal instants: the entry set first comes first. */
  seq: number
  /** The entry's position in its heap, `-1` when it is in none. */
  index: number
}

/** @internal */
export class TimerHeap<T extends Timed> {
  private readonly items: Array<T> = []
  private seq = 0

  get size(): number {
    return this.items.length
  }

  /** The earliest entry, left in place. */
  peek(): T | undefined {
    return this.items[0]
  }

  /** Sets `entry` due at `at`, moving it if it is already in the heap. */
  set(entry: T, at: number): void {
    if (entry.index >= 0) this.remove(entry)
    entry.at = at
    entry.seq = this.seq++
    entry.index = this.items.length
    this.items.push(entry)
    this.up(entry.index)
  }

  /** Takes `entry` out; nothing happens if it is in no heap. */
  remove(entry: T): void {
    const index = entry.index
    if (index < 0) return
    entry.index = -1
    const last = this.items.pop() as T
    if (index === this.items.length) return
    this.items[index] = last
    last.index = index
    this.down(index)
    this.up(last.index)
  }

  /** Takes out and answers the earliest entry due at or before `now`, if any. */
  popDue(now: number): T | undefined {
    const first = this.items[0]
    if (first === undefined || first.at > now) return undefined
    this.remove(first)
    return first
  }

  private before(a: T, b: T): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq)
  }

  private swap(i: number, j: number): void {
    const a = this.items[i] as T
    const b = this.items[j] as T
    this.items[i] = b
    this.items[j] = a
    a.index = j
    b.index = i
  }

  private up(index: number): void {
    let i = index
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(this.items[i] as T, this.items[parent] as T)) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(index: number): void {
    let i = index
    const n = this.items.length
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let least = i
      if (left < n && this.before(this.items[left] as T, this.items[least] as T)) least = left
      if (right < n && this.before(this.items[right] as T, this.items[least] as T)) least = right
      if (least === i) return
      this.swap(i, least)
      i = least
    }
  }
}
