/**
 * The stand-ins of a CLI run, served from a child process. In the client's own process they would
 * share its event loop: a turn the client spends on its own work (a scavenge, a batch of responses)
 * delays reading every request sent before it, and those requests then reach the quota's sliding
 * log together, so the server counted arrivals bunched by `rate × stall` that the client never
 * started bunched. A real provider's server runs elsewhere; so do these.
 *
 * The child is the CLI's own entry file, started with `ROLE_VARIABLE` set (see harness/main.ts).
 * The two talk over Node's IPC channel: the child says when it listens (a message that reaches a
 * child before its listener is lost, and loading the entry file takes the event loop through many
 * turns), the parent then sends the stand-ins' options, the child answers with their URLs, then
 * with their figures or fault changes on request. The child exits when the channel closes, so a client killed
 * with SIGKILL leaves no server behind; the parent's scope stops it too.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { Gazetteer } from "./Gazetteer.js"
import * as StandIn from "./StandIn.js"

/** Set in the child's environment: harness/main.ts serves stand-ins instead of running the CLI. */
export const ROLE_VARIABLE = "SLUICE_GEOCODING_STAND_INS"

type ToChild =
  | { readonly _tag: "Start"; readonly standIns: ReadonlyArray<StandIn.Options> }
  | { readonly _tag: "Stats"; readonly id: number }
  | { readonly _tag: "Faults"; readonly id: number; readonly index: number; readonly faults: StandIn.Faults }

type ToParent =
  /** The child listens for messages: the parent may send `Start`. */
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Started"; readonly ports: ReadonlyArray<number> }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Stats"; readonly id: number; readonly stats: ReadonlyArray<StandIn.Stats> }
  /** The faults are in effect: a request sent after this sees them. */
  | { readonly _tag: "FaultsSet"; readonly id: number }

export class StandInsFailed extends Data.TaggedError("StandInsFailed")<{ readonly reason: string }> {
  override get message(): string {
    return `the stand-in providers' process failed: ${this.reason}`
  }
}

/** How long the child may take to load the gazetteer and listen (under tsx on a loaded machine, ~3 s). */
const START_TIMEOUT_MILLIS = 60_000
/**
 * How long the parent waits for an answer to a request (figures, faults): a child that is stopped
 * (SIGSTOP) or hung would otherwise keep the run from printing its table and ending.
 */
export const ANSWER_TIMEOUT_MILLIS = 5_000
/** After SIGTERM, how long the child gets before SIGKILL. */
const STOP_GRACE_MILLIS = 3_000
/** What the parent keeps of the child's stderr for an error message. */
const STDERR_TAIL = 4_096

/** How to start the child: the CLI's entry file, and the Node options that run it (tsx's loader, say). */
export interface Entry {
  readonly file: string
  readonly execArgv: ReadonlyArray<string>
}

/** This process's own entry, for a CLI whose main module is harness/main.ts. */
export const thisEntry = (): Entry => ({ file: process.argv[1], execArgv: process.execArgv })

/**
 * Starts one child serving `standIns` (every option must survive structured clone: durations as
 * strings or milliseconds), stopped with the scope. Fails with `StandInsFailed` if the child exits
 * or reports an error before its servers listen; a figure asked of a child that has exited, or that
 * does not answer within `ANSWER_TIMEOUT_MILLIS`, fails with `NoAnswer`.
 */
export const start = (
  entry: Entry,
  standIns: ReadonlyArray<StandIn.Options>
): Effect.Effect<ReadonlyArray<StandIn.StandIn>, StandInsFailed, Scope.Scope> =>
  Effect.gen(function*() {
    let stderr = ""
    let exited: string | undefined
    // requests to the child awaiting its answer, by id: its figures, or none once faults are set
    const pending = new Map<number, (answer: Effect.Effect<ReadonlyArray<StandIn.Stats>, StandIn.NoAnswer>) => void>()
    let nextId = 0
    // how the start ended (once set, never changed), and the fiber waiting for it, if it waits yet
    let started: Effect.Effect<ReadonlyArray<number>, StandInsFailed> | undefined
    let onStart: ((result: Effect.Effect<ReadonlyArray<number>, StandInsFailed>) => void) | undefined
    const settleStart = (result: Effect.Effect<ReadonlyArray<number>, StandInsFailed>) => {
      if (started !== undefined) return
      started = result
      onStart?.(result)
    }

    const gone = (pid: number | undefined, request: string, reason: string) =>
      new StandIn.NoAnswer({ pid, request, reason })
    const failure = (reason: string) =>
      new StandInsFailed({
        reason: stderr.trim() === "" ? reason : `${reason}; its stderr ends with:\n${stderr.trim()}`
      })

    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, [...entry.execArgv, entry.file], {
          env: { ...process.env, [ROLE_VARIABLE]: "1" },
          stdio: ["ignore", "inherit", "pipe", "ipc"],
          serialization: "advanced",
          // a process group of its own: a Ctrl-C at the terminal reaches the CLI, which then lets
          // its lookups in flight finish against these servers before it stops them
          detached: true
        })
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL)
          process.stderr.write(chunk)
        })
        child.on("message", (message: ToParent) => {
          switch (message._tag) {
            case "Ready":
              send(child, { _tag: "Start", standIns })
              break
            case "Started":
              settleStart(Effect.succeed(message.ports))
              break
            case "Failed":
              settleStart(Effect.fail(failure(message.reason)))
              break
            case "Stats":
              pending.get(message.id)?.(Effect.succeed(message.stats))
              pending.delete(message.id)
              break
            case "FaultsSet":
              pending.get(message.id)?.(Effect.succeed([]))
              pending.delete(message.id)
          }
        })
        child.once("error", (error) => {
          exited = `could not start (${error.message})`
          settleStart(Effect.fail(failure(exited)))
        })
        child.once("exit", (code, signal) => {
          exited = `exited (${signal ?? `code ${code}`})`
          settleStart(Effect.fail(failure(exited)))
          for (const resume of pending.values()) resume(Effect.fail(gone(child.pid, "an answer in progress", exited)))
          pending.clear()
        })
        return child
      }),
      (child) => stop(child)
    )

    const ports = yield* Effect.async<ReadonlyArray<number>, StandInsFailed>((resume) => {
      if (started !== undefined) return resume(started)
      onStart = resume
      return Effect.sync(() => {
        onStart = undefined
      })
    }).pipe(
      Effect.timeoutFail({
        duration: START_TIMEOUT_MILLIS,
        onTimeout: () => failure(`its servers did not listen within ${START_TIMEOUT_MILLIS / 1000} s`)
      })
    )

    /**
     * Sends what `message` makes of a fresh id and waits for the child's answer to it, at most
     * `ANSWER_TIMEOUT_MILLIS`.
     */
    const ask = (request: string, message: (id: number) => ToChild) =>
      Effect.async<ReadonlyArray<StandIn.Stats>, StandIn.NoAnswer>((resume) => {
        if (exited !== undefined) return resume(Effect.fail(gone(child.pid, request, exited)))
        const id = nextId++
        pending.set(id, resume)
        send(child, message(id))
        return Effect.sync(() => pending.delete(id))
      }).pipe(
        Effect.timeoutFail({
          duration: ANSWER_TIMEOUT_MILLIS,
          onTimeout: () =>
            new StandIn.NoAnswer({
              pid: child.pid,
              request,
              reason: `no answer within ${ANSWER_TIMEOUT_MILLIS / 1000} s (stopped or hung)`
            })
        })
      )
    const stats = ask("its figures", (id) => ({ _tag: "Stats", id }))

    return standIns.map((options, index): StandIn.StandIn => ({
      format: options.format,
      url: `http://127.0.0.1:${ports[index]}`,
      port: ports[index],
      options,
      pid: child.pid,
      stats: Effect.map(stats, (all) => all[index]),
      // answered once the child applied them, as the stand-in in this process applies them at once
      setFaults: (faults) => Effect.asVoid(ask("a change of faults", (id) => ({ _tag: "Faults", id, index, faults })))
    }))
  })

const send = (child: ChildProcess, message: ToChild): void => {
  if (child.connected) child.send(message)
}

const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/** Until `child` exits. */
const untilExit = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (hasExited(child)) return resume(Effect.void)
    const onExit = () => resume(Effect.void)
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

/**
 * Closes the channel, which the child exits on, and sends SIGTERM; SIGKILL if the child is still
 * there after the grace period. SIGTERM alone is not enough: a child whose main fiber ends as the
 * signal arrives has its handler removed before the signal is dispatched to it, and the signal is
 * lost. The wait is interruptible so that the grace period can end it: a finalizer (where this
 * runs) is not, and a timeout there would otherwise wait for the exit it gave up on.
 */
const stop = (child: ChildProcess) =>
  Effect.suspend(() => {
    // a child that never started (no pid) has nothing to stop, and may never emit "exit"
    if (child.pid === undefined || hasExited(child)) return Effect.void
    if (child.connected) child.disconnect()
    child.kill("SIGTERM")
    return Effect.interruptible(untilExit(child)).pipe(
      Effect.timeoutTo({
        duration: STOP_GRACE_MILLIS,
        onSuccess: () => Effect.void,
        onTimeout: () => Effect.zipRight(Effect.sync(() => child.kill("SIGKILL")), untilExit(child))
      }),
      Effect.flatten
    )
  })

/**
 * The parent is gone, or stops this process: nobody will ever use these servers again (the exit
 * code is 1 after a failed start).
 */
const leave = (): never => process.exit()

/**
 * From the child's first instant: a parent that dies is noticed at once. A `disconnect` emitted
 * before this listener existed (while the modules loaded) is lost, but leaves the channel closed,
 * which `process.connected` shows.
 */
const watchParent = Effect.suspend(() => {
  if (process.send === undefined) return Effect.dieMessage(`${ROLE_VARIABLE} is set but there is no IPC channel`)
  process.once("disconnect", leave)
  if (!process.connected) leave()
  return Effect.void
})

const serve = Effect.gen(function*() {
  const reply = (message: ToParent) => {
    if (process.connected) process.send?.(message)
  }
  // the gazetteer took a while to load: the parent may have gone meanwhile
  if (!process.connected) return leave()
  const inbox = yield* Queue.unbounded<ToChild>()
  process.on("message", (message: ToChild) => Queue.unsafeOffer(inbox, message))
  reply({ _tag: "Ready" })

  const first = yield* Queue.take(inbox)
  if (first._tag !== "Start") {
    return yield* Effect.dieMessage(`expected the stand-ins' options first, got ${first._tag}`)
  }
  const started = yield* Effect.either(Effect.forEach(first.standIns, (options) => StandIn.make(options)))
  if (started._tag === "Left") {
    // the parent reports it, in one line that names the stand-in: nothing to print here
    reply({ _tag: "Failed", reason: started.left.message })
    process.exitCode = 1
    return
  }
  const standIns = started.right
  reply({ _tag: "Started", ports: standIns.map((standIn) => standIn.port) })
  while (true) {
    const message = yield* Queue.take(inbox)
    switch (message._tag) {
      case "Stats":
        // stand-ins in this process answer at once: they have no NoAnswer to give
        reply({
          _tag: "Stats",
          id: message.id,
          stats: yield* Effect.orDie(Effect.forEach(standIns, (standIn) => standIn.stats))
        })
        break
      case "Faults":
        yield* Effect.orDie(standIns[message.index].setFaults(message.faults))
        reply({ _tag: "FaultsSet", id: message.id })
        break
      case "Start":
        yield* Effect.logWarning("the stand-ins were already started: a second Start is ignored")
    }
  }
})

/**
 * The child's side: wait for the parent's options, serve them, answer until the parent is gone.
 * Run by harness/main.ts when `ROLE_VARIABLE` is set.
 */
export const serveParent: Effect.Effect<void> = Effect.zipRight(
  watchParent,
  Effect.suspend(() => serve).pipe(Effect.scoped, Effect.provide(Gazetteer.Default))
)
