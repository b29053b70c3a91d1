/**
 * The callers of a limiter between their reservation and their start, in the order of their
 * reserved starts (first come first served among equal ones), as a doubly linked list: only its
 * head keeps a timer, so callers that reserve together set one timer at a time. The binding owns
 * the waking; the queue tells it which caller became the head.
 *
 * @since 0.1.0
 */
import { EPSILON_MILLIS } from "./Algorithm.js"

/**
 * A place in the queue: the instant it may start, and its neighbours.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry<E extends Entry<E>> {
  /** When its reservation lets it start, on the binding's clock. */
  readonly target: number
  prev: E | undefined
  next: E | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export class StartQueue<E extends Entry<E>> {
  head: E | undefined = undefined
  private tail: E | undefined = undefined

  /** Queues `entry` after every entry whose start is no later than its own. */
  enqueue(entry: E): void {
    let before = this.tail
    while (before !== undefined && before.target > entry.target + EPSILON_MILLIS) before = before.prev
    const after = before === undefined ? this.head : before.next
    entry.prev = before
    entry.next = after
    if (before === undefined) this.head = entry
    else before.next = entry
    if (after === undefined) this.tail = entry
    else after.prev = entry
  }

  /** Takes `entry` out; answers the entry that became the head through it (to be woken), if any. */
  unlink(entry: E): E | undefined {
    const { next, prev } = entry
    if (prev === undefined) this.head = next
    else prev.next = next
    if (next === undefined) this.tail = prev
    else next.prev = prev
    entry.prev = undefined
    entry.next = undefined
    return prev === undefined ? next : undefined
  }
}
