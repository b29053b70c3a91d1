/**
 * A binary min-heap: the limiter's sleepers ordered by start time, so the dispatcher's single
 * timer always targets the earliest.
 *
 * @internal
 */
export class Heap<A> {
  private readonly items: Array<A> = []

  constructor(private readonly before: (a: A, b: A) => boolean) {}

  get size(): number {
    return this.items.length
  }

  peek(): A | undefined {
    return this.items[0]
  }

  push(item: A): void {
    const items = this.items
    let i = items.length
    items.push(item)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(item, items[parent])) break
      items[i] = items[parent]
      i = parent
    }
    items[i] = item
  }

  pop(): A | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (items.length === 0 || last === undefined) return top
    let i = 0
    const n = items.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && this.before(items[right], items[left]) ? right : left
      if (!this.before(items[child], last)) break
      items[i] = items[child]
      i = child
    }
    items[i] = last
    return top
  }
}
