/**
 * The batch helpers: a fixed pool of workers and bounded read-ahead, so that memory and fibers
 * stay flat whatever the length of the input.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { dual } from "effect/Function"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type * as Api from "../Bulkhead.js"
import type * as Batch from "../BulkheadBatch.js"
import { isBulkhead } from "./bulkhead.js"
import { decodeRunOptions } from "./validation.js"

const countsOf = (
  bulkhead: Api.Bulkhead<unknown>,
  options: Batch.BatchOptions | undefined
): { readonly workers: number; readonly buffer: number } => {
  const decoded = options === undefined ? undefined : decodeRunOptions(bulkhead.name)(options)
  const workers = decoded?.workers ?? bulkhead.maxPermits
  return { workers, buffer: decoded?.buffer ?? workers }
}

const runOptionsOf = (options: Batch.BatchOptions | undefined): Api.RunOptions | undefined => {
  const permits = options?.permits ?? options?.cost
  return permits === undefined ? undefined : { permits }
}

/** @internal */
export const forEach = dual<
  <A, E2, R2, EB = never>(
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: Batch.BatchOptions | undefined
  ) => (items: Iterable<A>) => Effect.Effect<void, E2 | Api.BulkheadError | EB, R2>,
  <A, E2, R2, EB = never>(
    items: Iterable<A>,
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<unknown, E2, R2>,
    options?: Batch.BatchOptions | undefined
  ) => Effect.Effect<void, E2 | Api.BulkheadError | EB, R2>
>((args) => isBulkhead(args[1]), <A, E2, R2, EB>(
  items: Iterable<A>,
  bulkhead: Api.Bulkhead<EB>,
  f: (a: A) => Effect.Effect<unknown, E2, R2>,
  options?: Batch.BatchOptions | undefined
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
    options?: Batch.BatchOptions | undefined
  ) => <E, R>(self: Stream.Stream<A, E, R>) => Stream.Stream<B, E | E2 | Api.BulkheadError | EB, R | R2>,
  <A, E, R, B, E2, R2, EB = never>(
    self: Stream.Stream<A, E, R>,
    bulkhead: Api.Bulkhead<EB>,
    f: (a: A) => Effect.Effect<B, E2, R2>,
    options?: Batch.BatchOptions | undefined
  ) => Stream.Stream<B, E | E2 | Api.BulkheadError | EB, R | R2>
>((args) => Stream.isStream(args[0]), <A, E, R, B, E2, R2, EB>(
  self: Stream.Stream<A, E, R>,
  bulkhead: Api.Bulkhead<EB>,
  f: (a: A) => Effect.Effect<B, E2, R2>,
  options?: Batch.BatchOptions | undefined
) =>
  Stream.unwrap(Effect.gen(function*() {
    const { buffer, workers } = countsOf(bulkhead, options)
    const runOptions = runOptionsOf(options)
    type Err = E | E2 | Api.BulkheadError | EB

    // The input: the source, re-chunked to at most `buffer` elements, pulled one chunk at a time
    // by whichever worker runs out first; the others wait for that pull instead of pulling too.
    const pull = yield* Stream.toPull(Stream.rechunk(self, buffer))
    let chunk: ReadonlyArray<A> = []
    let index = 0
    let exhausted = false
    let pulling: Deferred.Deferred<void> | undefined
    const next: Effect.Effect<Option.Option<A>, E, R> = Effect.suspend(function take(): Effect.Effect<
      Option.Option<A>,
      E,
      R
    > {
      if (index < chunk.length) return Effect.succeed(Option.some(chunk[index++]))
      if (exhausted) return Effect.succeed(Option.none())
      if (pulling !== undefined) return Effect.andThen(Deferred.await(pulling), Effect.suspend(take))
      const done = Deferred.makeUnsafe<void>()
      pulling = done
      return pull.pipe(
        Pull.matchEffect({
          onDone: () => {
            exhausted = true
            return Effect.void
          },
          onFailure: (cause) => Effect.failCause(cause),
          onSuccess: (pulled: Arr.NonEmptyReadonlyArray<A>) => {
            chunk = pulled
            index = 0
            return Effect.void
          }
        }),
        Effect.ensuring(Effect.suspend(() => {
          pulling = undefined
          return Deferred.done(done, Exit.void)
        })),
        Effect.andThen(Effect.suspend(take))
      )
    })

    // The output: a hand-off between the workers and the stream's consumer. Workers append results
    // to an array (waiting for room when it holds `buffer`); the consumer takes everything there is
    // as one chunk. A fiber is woken only when the other side is actually waiting, which keeps a
    // result to a few synchronous steps instead of a queue's suspend and resume per element: kept
    // over Effect's Queue because it costs less per element (bench bulkhead, Batch table).
    const results: Array<B> = []
    let failure: Cause.Cause<Err> | undefined
    let running = workers
    let consumer: Deferred.Deferred<void> | undefined
    let room: Deferred.Deferred<void> | undefined
    // Each side's deferred is cleared before it is completed: Effect 4 may resume the woken fiber
    // inside `doneUnsafe`, and that fiber may already have set a new one.
    const wakeConsumer = (): void => {
      const waiting = consumer
      consumer = undefined
      if (waiting !== undefined) Deferred.doneUnsafe(waiting, Exit.void)
    }
    const wakeWorkers = (): void => {
      const waiting = room
      room = undefined
      if (waiting !== undefined) Deferred.doneUnsafe(waiting, Exit.void)
    }
    const push = (value: B): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (failure !== undefined) return Effect.void
        if (results.length < buffer) {
          results.push(value)
          wakeConsumer()
          return Effect.void
        }
        room ??= Deferred.makeUnsafe<void>()
        return Effect.andThen(Deferred.await(room), push(value))
      })
    const stop = (cause: Cause.Cause<Err> | undefined) =>
      Effect.sync(() => {
        if (cause !== undefined) failure ??= cause
        running--
        wakeConsumer()
      })
    const worker: Effect.Effect<void, never, R | R2> = Effect.gen(function*() {
      for (;;) {
        const item = yield* Effect.exit(next)
        if (Exit.isFailure(item)) return yield* stop(item.cause)
        if (Option.isNone(item.value)) return yield* stop(undefined)
        const exit = yield* Effect.exit(bulkhead.run(f(item.value.value), runOptions))
        if (Exit.isFailure(exit)) return yield* stop(exit.cause)
        yield* push(exit.value)
      }
    })
    for (let i = 0; i < workers; i++) yield* Effect.forkScoped(worker)

    // results first, then the failure (which also ends the stream), then the end once all workers stopped
    const emit: Pull.Pull<Arr.NonEmptyReadonlyArray<B>, Err> = Effect.suspend(function pull(): Pull.Pull<
      Arr.NonEmptyReadonlyArray<B>,
      Err
    > {
      if (results.length > 0) {
        const chunk = results.splice(0) as unknown as Arr.NonEmptyReadonlyArray<B>
        wakeWorkers()
        return Effect.succeed(chunk)
      }
      if (failure !== undefined) return Effect.failCause(failure)
      if (running === 0) return Cause.done()
      consumer = Deferred.makeUnsafe<void>()
      return Effect.andThen(Deferred.await(consumer), Effect.suspend(pull))
    })
    return Stream.fromPull(Effect.succeed(emit))
  })))
