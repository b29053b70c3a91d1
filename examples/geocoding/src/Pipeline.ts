/**
 * The batch: rows stream from the input into a bounded queue, a fixed pool of workers takes them
 * one at a time (memory and fibers stay flat however long the input), each query is resolved once
 * (dedup cache, lookups in flight merged) through the router (a provider, then the next on any
 * refusal), and a single writer appends the results as they complete. Rows already in the output
 * are skipped, which is how a rerun resumes (a row written as failed is tried again). Interrupted, the run stops admitting rows and writes
 * what its lookups in flight complete within a short grace; a failed write ends it with its error.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { Calls } from "./Calls.js"
import * as Dedup from "./Dedup.js"
import type { InputError, Row } from "./Input.js"
import * as Output from "./Output.js"
import * as Progress from "./Progress.js"
import { Geocoders } from "./providers/Geocoders.js"
import * as Report from "./Report.js"
import * as Router from "./Router.js"

export interface Options<R> {
  readonly input: Stream.Stream<Row, InputError, R>
  /** Rows in the input, when known: for progress and ETA. */
  readonly total?: number | undefined
  readonly output: string
  readonly workers: number
  /** Answers the dedup cache keeps. */
  readonly cacheCapacity: number
  readonly progress: Progress.Options | false
}

export interface Summary {
  readonly output: string
  /** Rows read; rows skipped because the output already had them (resume). */
  readonly rows: number
  readonly skipped: number
  /** A torn last line was cut off the existing output. */
  readonly truncated: number
  readonly ok: number
  readonly notFound: number
  readonly failed: number
  readonly invalid: number
  /** Lookups sent to providers; rows answered from the cache or a lookup in flight. */
  readonly lookups: number
  readonly deduplicated: number
  readonly durationMillis: number
  readonly providers: ReadonlyArray<Report.ProviderReport>
}

type Query = Extract<Row, { readonly _tag: "Query" }>

/** Read-ahead of the workers: enough to keep them busy, small enough to keep memory flat. */
const QUEUE_PER_WORKER = 2
/**
 * Batches of results waiting for the writer: a batch is the cached answers of one chunk of input (a
 * read of 64 KiB of lines, ~1,700 rows of JSONL) or one worker's answer. Everything in this queue
 * lives until its write, and what lives that long is what V8 promotes and the peak RSS grows by:
 * it is kept to a few whole batches, not thousands of single records.
 */
const RESULT_BATCHES = 4
/** After an interruption, how long the lookups in flight get to finish, then the writer to write them. */
const STOP_GRACE = Duration.seconds(2)

const thousands = (n: number) => n.toLocaleString("en-US")

export const run = <R>(options: Options<R>) =>
  Effect.scoped(Effect.gen(function*() {
    const geocoders = yield* Geocoders
    const calls = yield* Calls
    const router = yield* Router.make(geocoders)
    const dedup = yield* Dedup.make(router, options.cacheCapacity)
    const output = yield* Output.open(options.output)
    const counts = { rows: 0, skipped: 0, ok: 0, notFound: 0, failed: 0, invalid: 0 }
    const done = () => counts.ok + counts.notFound + counts.failed
    // results written by this run, whole lines
    let written = 0

    const progress = options.progress === false ? undefined : yield* Progress.make(
      options.progress,
      Effect.gen(function*() {
        const providers = yield* Effect.forEach(geocoders, (geocoder) =>
          Effect.map(calls.stats(geocoder.origin), (stats) => ({ name: geocoder.name, requests: stats.responses })))
        return {
          done: done() + counts.skipped,
          total: options.total,
          providers
        }
      })
    )
    const log = (message: string) =>
      progress === undefined ? Effect.logWarning(message) : progress.log(message)
    const retrying = output.retried > 0 ? `; ${thousands(output.retried)} rows written as failed are tried again` : ""
    if (output.truncated > 0) {
      yield* log(
        `${options.output}: cut off a half-written last line; resuming after ${output.done.size} results${retrying}`
      )
    } else if (output.done.size > 0 || output.retried > 0) {
      yield* log(`${options.output}: resuming after ${output.done.size} results already written${retrying}`)
    }

    const startedAt = yield* Clock.currentTimeMillis
    const rows = yield* Queue.bounded<Row | null>(options.workers * QUEUE_PER_WORKER)
    // Bounded too: a producer answering from the cache must not outrun the disk.
    const results = yield* Queue.bounded<ReadonlyArray<Output.Record> | null>(RESULT_BATCHES)

    const failed = (row: Row, error: string): Output.Record => {
      counts.failed++
      return {
        id: row.id,
        query: row._tag === "Query" ? row.query : "",
        provider: null,
        lat: null,
        lon: null,
        display_name: null,
        status: "failed",
        error
      }
    }

    const answered = (row: Query, resolution: Router.Resolution): Output.Record => {
      if (resolution._tag === "NotFound") {
        counts.notFound++
        return {
          id: row.id,
          query: row.query,
          provider: resolution.provider,
          lat: null,
          lon: null,
          display_name: null,
          status: "not_found"
        }
      }
      counts.ok++
      return {
        id: row.id,
        query: row.query,
        provider: resolution.provider,
        lat: resolution.place.lat,
        lon: resolution.place.lon,
        display_name: resolution.place.displayName,
        status: "ok"
      }
    }

    const process = (row: Row): Effect.Effect<Output.Record> => {
      if (row._tag === "Invalid") {
        counts.invalid++
        return Effect.as(
          log(`line ${row.line}: invalid row (${row.reason}); written as failed`),
          failed(row, `line ${row.line}: ${row.reason}`)
        )
      }
      return Effect.match(dedup.resolve(row.query), {
        onFailure: (unresolved) =>
          failed(row, unresolved.message),
        onSuccess: (resolution) => answered(row, resolution)
      })
    }

    const worker = Effect.gen(function*() {
      while (true) {
        const row = yield* Queue.take(rows)
        if (row === null) {
          return
        }
        yield* Queue.offer(results, [yield* process(row)])
      }
    })

    // Results are few bytes each and leave as fast as the disk takes them: the writer drains
    // every batch ready into one write of whole lines.
    const writer = Effect.gen(function*() {
      while (true) {
        const batches = yield* Queue.takeBetween(results, 1, RESULT_BATCHES)
        const records: Array<Output.Record> = []
        let end = false
        for (const batch of batches) {
          if (batch === null) end = true
          else for (const record of batch) records.push(record)
        }
        yield* output.append(records)
        written += records.length
        if (end) return
      }
    })

    // A chunk of rows at a time: the rows already written are skipped, the ones whose answer the
    // cache holds are answered here (no worker, no fiber), and only the rest queue for a worker.
    const producer = options.input.pipe(
      Stream.runForEachChunk((chunk) => {
        const answers: Array<Output.Record> = []
        const pending: Array<Row> = []
        for (const row of chunk) {
          counts.rows++
          if (output.done.has(row.id)) {
            counts.skipped++
            continue
          }
          if (row._tag === "Query") {
            const resolution = dedup.cached(row.query)
            if (resolution !== undefined) {
              answers.push(answered(row, resolution))
              continue
            }
          }
          pending.push(row)
        }
        return Effect.zipRight(
          answers.length > 0 ? Queue.offer(results, answers) : Effect.void,
          pending.length > 0 ? Queue.offerAll(rows, pending) : Effect.void
        )
      })
    )

    const progressFiber = progress === undefined ? undefined : yield* Effect.fork(progress.run)
    // The workers and the writer run in this run's scope, not as children of the fiber that runs
    // it: an interruption (Ctrl-C) reaches a fiber's children at once, and these must outlive it
    // long enough to finish and write what is in flight (`stop`).
    const writerFiber = yield* Effect.forkScoped(writer)
    const workers = yield* Effect.forEach(
      Array.from({ length: options.workers }),
      () => Effect.forkScoped(worker)
    )
    // The input is read to its end: the workers get their stop signal and the writer its last lines.
    const finish = Effect.gen(function*() {
      for (let i = 0; i < options.workers; i++) yield* Queue.offer(rows, null)
      yield* Fiber.joinAll(workers)
      yield* Queue.offer(results, null)
      yield* Fiber.join(writerFiber)
    })
    // Interrupted: no row is admitted any more, the lookups in flight get `STOP_GRACE` to finish
    // (then they are abandoned: a row not written is done again on resume), and what completed is
    // written. The waits are interruptible so that the grace can end them: this runs as a finalizer.
    const stop = Effect.gen(function*() {
      yield* Queue.shutdown(rows)
      const settled = yield* Fiber.awaitAll(workers).pipe(
        Effect.interruptible,
        Effect.timeout(STOP_GRACE),
        Effect.option
      )
      if (Option.isNone(settled)) yield* Fiber.interruptAll(workers)
      const writing = yield* Queue.offer(results, null).pipe(
        Effect.zipRight(Fiber.await(writerFiber)),
        Effect.interruptible,
        Effect.timeout(STOP_GRACE),
        Effect.option
      )
      if (progressFiber !== undefined && progress !== undefined) yield* progress.finish
      const abandoned = Option.isNone(settled) ? " (lookups still running after the grace were abandoned)" : ""
      const failure = Option.isSome(writing) && Exit.isFailure(writing.value)
        ? Cause.failureOption(writing.value.cause)
        : Option.none()
      const end = Option.match(failure, { onNone: () => "", onSome: (error) => `; ${error.message}` })
      yield* Console.error(
        `interrupted: ${thousands(written)} results written to ${options.output} in this run, ${
          thousands(output.done.size + written)
        } in all${options.total === undefined ? "" : ` of ${thousands(options.total)} rows`}${abandoned}${end}; ` +
          "run the same command again to resume"
      )
    })
    // A failed write (a full disk) ends the run at once with its error: the writer's failure wins
    // the race, and the scope interrupts the workers waiting to hand it their results.
    yield* Effect.raceFirst(Effect.zipRight(producer, finish), Fiber.join(writerFiber)).pipe(
      Effect.onInterrupt(() => stop)
    )
    if (progressFiber !== undefined && progress !== undefined) {
      yield* Fiber.interrupt(progressFiber)
      yield* progress.finish
    }
    const durationMillis = (yield* Clock.currentTimeMillis) - startedAt
    const dedupStats = yield* dedup.stats
    const summary: Summary = {
      output: options.output,
      ...counts,
      truncated: output.truncated,
      lookups: dedupStats.lookups,
      deduplicated: dedupStats.deduplicated,
      durationMillis,
      providers: yield* Report.collect(geocoders, router)
    }
    return summary
  }))

export type Requirements = Geocoders | Calls | FileSystem.FileSystem
