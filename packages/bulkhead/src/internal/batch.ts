/**
 * The batch helpers: a fixed pool of workers and bounded read-ahead, so that memory and fibers
 * stay flat whatever the length of the input.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { dual } from "effect/Function"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import type * as Api from "../Bulkhead.js"
import { isBulkhead } from "./bulkhead.js"
import { decodeRunOptions } from "./validation.js"

const countsOf = (
  bulkhead: Api.Bulkhead<unknown>,
  options: Api.BatchOptions | undefined
): { readonly workers: number; readonly buffer: number } => {
  const decoded = options === undefined ? undefined : decodeRunOptions(bulkhead.name)(options)
  const workers = decoded?.workers ?? bulkhead.maxPermits
  return { workers, buffer: decoded?.buffer ?? workers }
}

const runOptionsOf = (options: Api.BatchOptions | undefined): Api.RunOptions | undefined => {
  const permits = options?.permits ?? options?.cost
  return permits === undefined ? undefined : { permits }
}

/** @internal */
export const forEach = dual<
  <A, E2, R2, EB = never>(
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: Api.BatchOptions | undefined
  ) => (items: Iterable<A>) => Effect.Effect<void, E2 | Api.BulkheadError | EB, R2>,
  <A, E2, R2, EB = never>(
    items: Iterable<A>,
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: Api.BatchOptions | undefined
  ) => Effect.Effect<void, E2 | Api.BulkheadError | EB, R2>
>((args) => isBulkhead(args[1]), <A, E2, R2, EB>(
  items: Iterable<A>,
  bulkhead: Api.Bulkhead<EB>,
  f: (a: A) => Effect.Effect<unknown, E2, R2>,
  options?: Api.BatchOptions | undefined
) =>
  Effect.suspend(() => {
    const { workers } = countsOf(bulkhead, options)
    const runOptions = runOptionsOf(options)
    // the iterator is the bounded queue: a worker pulls the next item only when it is free
    const iterator = items[Symbol.iterator]()
    const worker: Effect.Effect<void, unknown, R2> = Effect.suspend(function loop(): Effect.Effect<
      void,
      unknown,
      R2
    > {
      const next = iterator.next()
      return next.done === true ? Effect.void : Effect.flatMap(bulkhead.run(f(next.value), runOptions), loop)
    })
    return Effect.all(Array.from({ length: workers }, () => worker), {
      concurrency: "unbounded",
      discard: true
    }) as Effect.Effect<void, E2 | Api.BulkheadError | EB, R2>
  }))

/** @internal */
export const mapStream = dual<
  <A, B, E2, R2, EB = never>(
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<B, E2, R2>,
    options?: Api.BatchOptions | undefined
  ) => <E, R>(self: Stream.Stream<A, E, R>) => Stream.Stream<B, E | E2 | Api.BulkheadError | EB, R | R2>,
  <A, E, R, B, E2, R2, EB = never>(
    self: Stream.Stream<A, E, R>,
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<B, E2, R2>,
    options?: Api.BatchOptions | undefined
  ) => Stream.Stream<B, E | E2 | Api.BulkheadError | EB, R | R2>
>((args) => Predicate.hasProperty(args[0], Stream.StreamTypeId), <A, E, R, B, E2, R2, EB>(
  self: Stream.Stream<A, E, R>,
  bulkhead: Api.Bulkhead<EB>,
  f: (a: A) => Effect.Effect<B, E2, R2>,
  options?: Api.BatchOptions | undefined
) =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const { buffer, workers } = countsOf(bulkhead, options)
    const runOptions = runOptionsOf(options)
    type Err = E | E2 | Api.BulkheadError | EB

    // The input: the source, re-chunked to at most `buffer` elements, pulled one chunk at a time
    // by whichever worker runs out first; the others wait for that pull instead of pulling too.
    const pull = yield* Stream.toPull(Stream.rechunk(self, buffer))
    let chunk: Chunk.Chunk<A> = Chunk.empty()
    let index = 0
    let exhausted = false
    let pulling: Deferred.Deferred<void> | undefined
    const next: Effect.Effect<Option.Option<A>, E, R> = Effect.suspend(function take(): Effect.Effect<
      Option.Option<A>,
      E,
      R
    > {
      if (index < chunk.length) return Effect.succeed(Option.some(Chunk.unsafeGet(chunk, index++)))
      if (exhausted) return Effect.succeed(Option.none())
      if (pulling !== undefined) return Effect.zipRight(Deferred.await(pulling), Effect.suspend(take))
      const done = Deferred.unsafeMake<void>(FiberId.none)
      pulling = done
      return pull.pipe(
        Effect.matchEffect({
          onFailure: Option.match({
            onNone: () => {
              exhausted = true
              return Effect.void
            },
            onSome: (error) => Effect.fail(error)
          }),
          onSuccess: (pulled) => {
            chunk = pulled
            index = 0
            return Effect.void
          }
        }),
        Effect.ensuring(Effect.suspend(() => {
          pulling = undefined
          return Deferred.done(done, Exit.void)
        })),
        Effect.zipRight(Effect.suspend(take))
      )
    })

    // The output: a hand-off between the workers and the stream's consumer. Workers append results
    // to an array (waiting for room when it holds `buffer`); the consumer takes everything there is
    // as one chunk. A fiber is woken only when the other side is actually waiting, which keeps a
    // result to a few synchronous steps instead of a queue's suspend and resume per element: kept
    // over Effect's Queue because it costs less per element (bench bulkhead, Batch table).
    const results: Array<B> = []
    let failure: Cause.Cause<Option.Option<Err>> | undefined
    let running = workers
    let consumer: Deferred.Deferred<void> | undefined
    let room: Deferred.Deferred<void> | undefined
    const wake = (deferred: Deferred.Deferred<void> | undefined): undefined => {
      if (deferred !== undefined) Deferred.unsafeDone(deferred, Exit.void)
      return undefined
    }
    const push = (value: B): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (failure !== undefined) return Effect.void
        if (results.length < buffer) {
          results.push(value)
          consumer = wake(consumer)
          return Effect.void
        }
        room ??= Deferred.unsafeMake<void>(FiberId.none)
        return Effect.zipRight(Deferred.await(room), push(value))
      })
    const stop = (cause: Cause.Cause<Option.Option<Err>> | undefined) =>
      Effect.sync(() => {
        if (cause !== undefined) failure ??= cause
        running--
        consumer = wake(consumer)
      })
    const worker: Effect.Effect<void, never, R | R2> = Effect.gen(function*() {
      for (;;) {
        const item = yield* Effect.exit(next)
        if (Exit.isFailure(item)) return yield* stop(Cause.map(item.cause, Option.some))
        if (Option.isNone(item.value)) return yield* stop(undefined)
        const exit = yield* Effect.exit(bulkhead.run(f(item.value.value), runOptions))
        if (Exit.isFailure(exit)) return yield* stop(Cause.map(exit.cause, Option.some))
        yield* push(exit.value)
      }
    })
    for (let i = 0; i < workers; i++) yield* Effect.forkScoped(worker)

    // results first, then the failure (which also ends the stream), then the end once all workers stopped
    const emit: Effect.Effect<Chunk.Chunk<B>, Option.Option<Err>> = Effect.suspend(function pull(): Effect.Effect<
      Chunk.Chunk<B>,
      Option.Option<Err>
    > {
      if (results.length > 0) {
        const chunk = Chunk.unsafeFromArray(results.splice(0))
        room = wake(room)
        return Effect.succeed(chunk)
      }
      if (failure !== undefined) return Effect.failCause(failure)
      if (running === 0) return Effect.fail(Option.none())
      consumer = Deferred.unsafeMake<void>(FiberId.none)
      return Effect.zipRight(Deferred.await(consumer), Effect.suspend(pull))
    })
    return Stream.repeatEffectChunkOption(emit)
  })))
