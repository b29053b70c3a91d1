/**
 * The batch helpers: a stream or an iterable mapped through a bulkhead by a fixed pool of workers
 * with bounded read-ahead, so that memory and fibers stay flat whatever the length of the input.
 * `Bulkhead` re-exports them; this module holds them apart from the bulkhead itself.
 *
 * @since 2.0.0
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { Bulkhead } from "./Bulkhead.js"
import type { BulkheadError } from "./BulkheadError.js"
import * as batch from "./internal/batch.js"

/**
 * Options of the batch helpers.
 *
 * @since 2.0.0
 * @category models
 */
export interface BatchOptions {
  /**
   * Worker fibers: the most items in progress at once, including items still waiting for a
   * permit. Default: the bulkhead's `maxPermits`, enough to use every permit and no more.
   */
  readonly workers?: number | undefined
  /** Items read ahead of the workers (the bounded queue). Default: `workers`. */
  readonly buffer?: number | undefined
  /** Permits each item needs. Default 1. */
  readonly permits?: number | undefined
  /** @deprecated Use `permits`. Read when `permits` is not given. */
  readonly cost?: number | undefined
}

/**
 * Maps a stream through a bulkhead with a fixed pool of worker fibers reading a bounded queue:
 * memory and fibers stay flat whatever the length of the input, and the input is pulled only as
 * fast as the workers free up (backpressure). Results are emitted in completion order. The first
 * failure ends the stream and interrupts the workers, which return their permits.
 *
 * @example
 * ```ts
 * import { Bulkhead } from "@sluice/bulkhead"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const bulkhead = yield* Bulkhead.make({ name: "geocoder", permits: 16 })
 *   const count = yield* Stream.range(1, 1_000_000).pipe(
 *     Bulkhead.mapStream(bulkhead, (n) => Effect.succeed(n * 2)),
 *     Stream.runCount
 *   )
 * })
 * ```
 *
 * @since 2.0.0
 * @category combinators
 */
export const mapStream: {
  <A, B, E2, R2, EB = never>(
    bulkhead: Bulkhead<EB>,
    f: (a: A) => Effect.Effect<B, E2, R2>,
    options?: BatchOptions | undefined
  ): <E, R>(self: Stream.Stream<A, E, R>) => Stream.Stream<B, E | E2 | BulkheadError | EB, R | R2>
  <A, E, R, B, E2, R2, EB = never>(
    self: Stream.Stream<A, E, R>,
    bulkhead: Bulkhead<EB>,
    f: (a: A) => Effect.Effect<B, E2, R2>,
    options?: BatchOptions | undefined
  ): Stream.Stream<B, E | E2 | BulkheadError | EB, R | R2>
} = batch.mapStream

/**
 * Runs `f` over every item of an iterable through a bulkhead with a fixed pool of workers that
 * pull the next item from the iterator as they free up: the iterator is never drained ahead of
 * the workers, so a lazy iterable of any length costs constant memory. Results are discarded;
 * the first failure interrupts the other workers and is returned.
 *
 * @since 2.0.0
 * @category combinators
 */
export const forEach: {
  <A, E2, R2, EB = never>(
    bulkhead: Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: BatchOptions | undefined
  ): (items: Iterable<A>) => Effect.Effect<void, E2 | BulkheadError | EB, R2>
  <A, E2, R2, EB = never>(
    items: Iterable<A>,
    bulkhead: Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: BatchOptions | undefined
  ): Effect.Effect<void, E2 | BulkheadError | EB, R2>
} = batch.forEach
