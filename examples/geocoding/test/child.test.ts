/**
 * The CLI's stand-ins in a process of their own: they answer, report their figures and take fault
 * changes across the process boundary, stop with the scope that started them, and a server that
 * cannot listen fails the start with an error that says why.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Child from "../stand-ins/Child.js"
import * as StandIns from "../stand-ins/StandIns.js"
import { isAlive, testEntry } from "./utils.js"

const options = (name: "opencage" | "photon", port?: number) =>
  StandIns.optionsFor(name, {
    profile: { rate: 100, medianMillis: 1, p95Millis: 2 },
    burst: 3,
    concurrency: 8,
    port,
    seed: 1
  })

describe("stand-ins in a child process", () => {
  it.live("answer, report and take faults from the parent, and stop with its scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const [opencage, photon] = yield* Child.start(testEntry, [options("opencage"), options("photon")]).pipe(
        Scope.extend(scope)
      )
      const pid = photon.pid
      expect(pid).toBeTypeOf("number")
      expect(opencage.pid).toBe(pid)
      expect(pid).not.toBe(process.pid)

      const get = (path: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${photon.url}${path}`)
          const body = (await response.json()) as { type?: string; features?: Array<{ properties: { name: string } }> }
          return { status: response.status, body }
        })
      const found = yield* get("/api?q=Paris&limit=1")
      expect(found.status).toBe(200)
      expect(found.body.type).toBe("FeatureCollection")
      expect(found.body.features?.[0].properties.name).toBe("Paris")
      expect((yield* photon.stats).requests).toBe(1)
      expect((yield* opencage.stats).requests).toBe(0)

      yield* photon.setFaults({ errorRate: 1 })
      expect((yield* get("/api?q=Paris")).status).toBe(500)
      expect(yield* photon.stats).toMatchObject({ requests: 2, errors: 1 })

      yield* Scope.close(scope, Exit.void)
      expect(isAlive(pid!)).toBe(false)
    }), 60_000)

  it.live("fails with StandInsFailed, saying why, when a server cannot listen", () =>
    Effect.gen(function*() {
      const taken = Net.createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve)))
      const port = (taken.address() as Net.AddressInfo).port
      const error = yield* Child.start(testEntry, [options("photon", port)]).pipe(Effect.scoped, Effect.flip)
      taken.close()
      expect(error._tag).toBe("StandInsFailed")
      expect(error.message).toMatch(/stand-in providers' process failed/)
      expect(error.message).toMatch(
        new RegExp(`photon stand-in could not listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`)
      )
    }), 60_000)

  it.live(
    "kills a child that ignores SIGTERM and its channel closing, once the grace period ends",
    () =>
      Effect.gen(function*() {
        const pidFile = Path.join(Os.tmpdir(), `sluice-stubborn-child-of-${process.pid}`)
        Fs.rmSync(pidFile, { force: true })
        const entry: Child.Entry = {
          file: Path.join(import.meta.dirname, "fixtures", "stubborn-child.mjs"),
          execArgv: []
        }
        // the child never answers: the start gives up, and the scope stops the child as it closes
        const started = yield* Child.start(entry, [options("photon")]).pipe(
          Effect.timeout("2 seconds"),
          Effect.scoped,
          Effect.exit
        )
        expect(Exit.isFailure(started)).toBe(true)
        const pid = Number(Fs.readFileSync(pidFile, "utf8"))
        Fs.rmSync(pidFile)
        expect(isAlive(pid)).toBe(false)
      }),
    20_000
  )
})
