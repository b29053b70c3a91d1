/**
 * Progress on stderr while the batch runs: done/total, rows per second, ETA and each provider's
 * request rate. On a terminal the line is redrawn in place; anywhere else (a pipe, a CI log) a
 * plain line is printed every few seconds instead.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

export interface Snapshot {
  readonly done: number
  readonly total: number | undefined
  /** Requests answered so far, per provider. */
  readonly providers: ReadonlyArray<{ readonly name: string; readonly requests: number }>
}

export interface Options {
  readonly tty: boolean
  /** Between plain lines (not a terminal). */
  readonly every: Duration.DurationInput
}

const REDRAW = Duration.millis(250)

const eta = (seconds: number): string =>
  !Number.isFinite(seconds) ? "?" : seconds >= 60 ?
    `${Math.floor(seconds / 60)}m${Math.round(seconds % 60)}s` :
    `${Math.ceil(seconds)}s`

/** Runs until interrupted, printing a snapshot per tick; `finish` clears the line it drew. */
export const make = (options: Options, snapshot: Effect.Effect<Snapshot>) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    let last = { at: startedAt, requests: new Map<string, number>() }
    const line = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const current = yield* snapshot
      const elapsed = (now - startedAt) / 1000
      const interval = Math.max((now - last.at) / 1000, 1e-3)
      const rowsPerSecond = current.done / Math.max(elapsed, 1e-3)
      const total = current.total === undefined ? "" : `/${current.total}`
      const left = current.total === undefined ? Number.NaN : (current.total - current.done) / rowsPerSecond
      const providers = current.providers.map((p) =>
        `${p.name} ${Math.round((p.requests - (last.requests.get(p.name) ?? 0)) / interval)}/s`
      ).join("  ")
      last = { at: now, requests: new Map(current.providers.map((p) => [p.name, p.requests])) }
      return `${current.done}${total} rows  ${Math.round(rowsPerSecond)} rows/s  ETA ${eta(left)}  |  ${providers}`
    })
    const print = options.tty
      ? Effect.flatMap(line, (text) => Effect.sync(() => process.stderr.write(`\r\x1b[K${text}`)))
      : Effect.flatMap(line, (text) => Effect.sync(() => process.stderr.write(`progress: ${text}\n`)))
    const tick = options.tty ? REDRAW : Duration.decode(options.every)
    return {
      run: Effect.repeat(Effect.delay(print, tick), Schedule.forever).pipe(Effect.asVoid),
      /** Prints a message without tearing the progress line. */
      log: (message: string) =>
        Effect.sync(() => process.stderr.write(options.tty ? `\r\x1b[K${message}\n` : `${message}\n`)),
      finish: Effect.sync(() => {
        if (options.tty) process.stderr.write("\r\x1b[K")
      })
    } as const
  })
