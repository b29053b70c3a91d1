/**
 * The stand-in in a child process of its own. In the client's process it would share the client's
 * event loop: every turn the client spends on its own work would delay reading the requests sent
 * before it, and the server would count those arrivals bunched although they left evenly spaced.
 * OpenAI's servers run elsewhere; so does this one.
 *
 * The child is the CLI's own entry file started with `ROLE_VARIABLE` set (see main.ts). Over Node's
 * IPC channel it says when it listens for messages, takes the options, answers with its port, then
 * with its figures on request. It exits when the channel closes, so a client killed with SIGKILL
 * leaves no server behind; the parent's scope stops it too (SIGTERM, then SIGKILL after a grace).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import * as StandIn from "./StandIn.js"

/** Set in the child's environment: main.ts serves the stand-in instead of running the CLI. */
export const ROLE_VARIABLE = "SLUICE_LLM_STAND_IN"

type ToChild =
  | { readonly _tag: "Start"; readonly options: StandIn.Options }
  | { readonly _tag: "Stats"; readonly id: number }

type ToParent =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Started"; readonly port: number }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Stats"; readonly id: number; readonly stats: StandIn.Stats }

export class StandInFailed extends Data.TaggedError("StandInFailed")<{ readonly reason: string }> {
  override get message(): string {
    return `the OpenAI stand-in's process failed: ${this.reason}`
  }
}

/** How to start the child: the CLI's entry file, and the Node options that run it (tsx's loader, say). */
export interface Entry {
  readonly file: string
  readonly execArgv: ReadonlyArray<string>
}

/** This process's own entry, for a CLI whose main module is main.ts. */
export const thisEntry = (): Entry => ({ file: process.argv[1], execArgv: process.execArgv })

const START_TIMEOUT = "60 seconds"
const STOP_GRACE = "3 seconds"

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

const untilExit = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (hasExited(child)) return resume(Effect.void)
    const onExit = () => resume(Effect.void)
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

/** Closes the channel (the child leaves on it) and sends SIGTERM; SIGKILL once the grace period ends. */
const stop = (child: ChildProcess) =>
  Effect.suspend(() => {
    if (child.pid === undefined || hasExited(child)) return Effect.void
    if (child.connected) child.disconnect()
    child.kill("SIGTERM")
    return Effect.interruptible(untilExit(child)).pipe(
      Effect.timeoutTo({
        duration: STOP_GRACE,
        onSuccess: () => Effect.void,
        onTimeout: () => Effect.zipRight(Effect.sync(() => child.kill("SIGKILL")), untilExit(child))
      }),
      Effect.flatten
    )
  })

/** Starts the stand-in in a child process, stopped with the scope. */
export const start = (
  entry: Entry,
  options: StandIn.Options
): Effect.Effect<StandIn.StandIn, StandInFailed, Scope.Scope> =>
  Effect.gen(function*() {
    let stderr = ""
    let exited: string | undefined
    let onStart: ((result: Effect.Effect<number, StandInFailed>) => void) | undefined
    let started: Effect.Effect<number, StandInFailed> | undefined
    const settle = (result: Effect.Effect<number, StandInFailed>) => {
      if (started !== undefined) return
      started = result
      onStart?.(result)
    }
    const pending = new Map<number, (stats: Effect.Effect<StandIn.Stats>) => void>()
    let nextId = 0
    const failure = (reason: string) =>
      new StandInFailed({
        reason: stderr.trim() === "" ? reason : `${reason}; its stderr ends with:\n${stderr.trim()}`
      })
    const send = (child: ChildProcess, message: ToChild) => {
      if (child.connected) child.send(message)
    }

    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, [...entry.execArgv, entry.file], {
          env: { ...process.env, [ROLE_VARIABLE]: "1" },
          stdio: ["ignore", "inherit", "pipe", "ipc"],
          serialization: "advanced",
          // its own process group: a Ctrl-C reaches the CLI, which stops this child when it is done
          detached: true
        })
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr = (stderr + chunk.toString("utf8")).slice(-4_096)
          process.stderr.write(chunk)
        })
        child.on("message", (message: ToParent) => {
          switch (message._tag) {
            case "Ready":
              return send(child, { _tag: "Start", options })
            case "Started":
              return settle(Effect.succeed(message.port))
            case "Failed":
              return settle(Effect.fail(failure(message.reason)))
            case "Stats":
              pending.get(message.id)?.(Effect.succeed(message.stats))
              pending.delete(message.id)
          }
        })
        child.once("error", (error) => settle(Effect.fail(failure(`could not start (${error.message})`))))
        child.once("exit", (code, signal) => {
          exited = `exited (${signal ?? `code ${code}`})`
          settle(Effect.fail(failure(exited)))
          for (const resume of pending.values()) resume(Effect.dieMessage(failure(exited).message))
          pending.clear()
        })
        return child
      }),
      stop
    )

    const port = yield* Effect.async<number, StandInFailed>((resume) => {
      if (started !== undefined) return resume(started)
      onStart = resume
      return Effect.sync(() => {
        onStart = undefined
      })
    }).pipe(
      Effect.timeoutFail({
        duration: START_TIMEOUT,
        onTimeout: () => failure(`it did not listen within ${START_TIMEOUT}`)
      })
    )

    const stats = Effect.async<StandIn.Stats>((resume) => {
      if (exited !== undefined) return resume(Effect.dieMessage(failure(exited).message))
      const id = nextId++
      pending.set(id, resume)
      send(child, { _tag: "Stats", id })
      return Effect.sync(() => pending.delete(id))
    })
    const standIn: StandIn.StandIn = { url: `http://127.0.0.1:${port}`, port, pid: child.pid, stats }
    return standIn
  })

/** The parent is gone: nobody will use this server again. */
const leave = (): never => process.exit()

/** The child's side, run by main.ts when `ROLE_VARIABLE` is set: serve, answer, leave with the parent. */
export const serveParent: Effect.Effect<void> = Effect.gen(function*() {
  if (process.send === undefined) return yield* Effect.dieMessage(`${ROLE_VARIABLE} is set but there is no IPC channel`)
  process.once("disconnect", leave)
  if (!process.connected) return leave()
  const reply = (message: ToParent) => {
    if (process.connected) process.send?.(message)
  }
  const inbox = yield* Queue.unbounded<ToChild>()
  process.on("message", (message: ToChild) => Queue.unsafeOffer(inbox, message))
  reply({ _tag: "Ready" })
  const first = yield* Queue.take(inbox)
  if (first._tag !== "Start") {
    return yield* Effect.dieMessage(`expected the stand-in's options first, got ${first._tag}`)
  }
  const standIn = yield* Effect.either(StandIn.make(first.options))
  if (standIn._tag === "Left") {
    reply({ _tag: "Failed", reason: standIn.left.message })
    process.exitCode = 1
    return
  }
  const server = standIn.right
  reply({ _tag: "Started", port: server.port })
  while (true) {
    const message = yield* Queue.take(inbox)
    if (message._tag === "Stats") reply({ _tag: "Stats", id: message.id, stats: yield* server.stats })
  }
}).pipe(Effect.scoped)
