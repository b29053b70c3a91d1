/**
 * A bulkhead bounds how many calls to one resource are in flight at once.
 *
 * A released permit goes straight to the next waiter in the same step: by default the oldest, so
 * a newcomer never barges past the queue, and a heavy (weighted) waiter at the head is never
 * overtaken by lighter ones behind it; with `order: "lifo"`, the newest. Waiting is budgeted
 * (`maxWait`) and the queue is bounded (`maxWaiting`); each refusal is its own typed error.
 *
 * @since 2.0.0
 */
export * as Bulkhead from "./Bulkhead.js"

/**
 * The batch helpers: a stream or an iterable mapped through a bulkhead by a fixed pool of workers
 * with bounded read-ahead, so that memory and fibers stay flat whatever the length of the input.
 * `Bulkhead` re-exports them; this module holds them apart from the bulkhead itself.
 *
 * @since 2.0.0
 */
export * as BulkheadBatch from "./BulkheadBatch.js"

/**
 * The errors of a bulkhead: each way a call can be refused a permit. Every one names its bulkhead
 * in the field `bulkhead`.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 2.0.0
 */
export * as BulkheadError from "./BulkheadError.js"

/**
 * Lanes: several kinds of callers on one bulkhead, one pool of permits. A call names its lane
 * (`bulkhead.run(effect, { lane: "interactive" })`) and the bulkhead's policy decides which
 * lane's waiter a released permit goes to:
 *
 * - `priority`: lanes listed highest first; a lower lane's waiter gives way for its lane's
 *   `yieldFor`, then ranks with a caller of the first lane arriving now. A waiter's due time is
 *   when it queued plus its lane's `yieldFor`, and the earliest due goes first: interactive calls
 *   pass a batch's queue, and a batch call still waits a bounded time however many come.
 * - `fairShare`: lanes are tenants, made on first sight; under contention each busy lane gets
 *   permits in proportion to its weight (deficit round-robin), and an idle lane's share goes to
 *   the others.
 *
 * Within a lane waiters are FIFO, and the waiter chosen next that does not fit the free permits
 * stops every grant behind it, so a heavy call is never overtaken. The rules and their bounds:
 * docs/semantics.md, "Lanes".
 *
 * @since 2.0.0
 */
export * as BulkheadLanes from "./BulkheadLanes.js"
