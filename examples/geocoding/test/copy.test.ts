/**
 * The geocoder a user copies is `src/` alone, its entry `src/main.ts`: given each provider's base
 * URL (here stand-ins this test serves) it geocodes an input file; given no input file it says
 * so, naming the flag; and nothing in `src/` imports the harness or the stand-ins.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Offline from "../harness/Offline.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import { baseConfig, collect, distinctInput, exampleDir, readOutput, tempDir } from "./utils.js"

const RATES = { opencage: 40, photon: 20, nominatim: 10 } as const

/** The copied geocoder's entry, in a child process through tsx. */
const runCopied = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
        cwd: exampleDir,
        stdio: ["ignore", "pipe", "pipe"]
      })
    ),
    (child) =>
      Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      })
  ).pipe(Effect.flatMap((child) => Effect.promise(() => collect(child))))

const sources = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(Path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [Path.join(dir, entry.name)]
      : []
  )

describe("src/, the geocoder a user copies", () => {
  it.live("geocodes a file across the providers at their --url", () =>
    Effect.gen(function*() {
      // burst 1, as a run uses against a --url
      const { standIns } = yield* Offline.prepare(
        baseConfig({ rates: { ...RATES }, bursts: { opencage: 1, photon: 1, nominatim: 1 } })
      )
      const dir = tempDir()
      const input = Path.join(dir, "in.jsonl")
      const ids = distinctInput(input, 40)
      const output = Path.join(dir, "out.jsonl")
      const report = Path.join(dir, "run.html")
      const result = yield* runCopied([
        "run",
        "--input",
        input,
        "--output",
        output,
        "--report",
        report,
        "--json",
        ...standIns.flatMap((standIn) => ["--url", `${standIn.format}=${standIn.url}`]),
        ...Object.entries(RATES).flatMap(([name, rate]) => ["--rate", `${name}=${rate}`])
      ])
      expect(result.code, result.stderr).toBe(0)
      const { summary } = JSON.parse(result.stdout.trim().split("\n").pop() ?? "") as {
        summary: { rows: number; failed: number }
      }
      expect(summary).toMatchObject({ rows: 40, failed: 0 })
      expect(readOutput(output).map((record) => record.id).sort()).toEqual([...ids].sort())
      // the report's path on stderr (stdout is the JSON line), the page with every provider
      expect(result.stderr).toContain(`report: ${report}`)
      const html = Fs.readFileSync(report, "utf8")
      for (const name of Object.keys(RATES)) expect(html).toContain(`<h2>${name}</h2>`)
    }).pipe(Effect.scoped, Effect.provide(Gazetteer.Default)), 120_000)

  it.live("refuses a run without --input, naming the flag", () =>
    Effect.gen(function*() {
      const result = yield* runCopied(["run", "--output", Path.join(tempDir(), "out.jsonl")])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("error: --input is required")
    }).pipe(Effect.scoped), 60_000)

  it("imports nothing from harness/ or stand-ins/", () => {
    const src = Path.join(exampleDir, "src")
    const reaching = sources(src).filter((file) =>
      /from "(\.\.\/)+(harness|stand-ins)\//.test(Fs.readFileSync(file, "utf8"))
    )
    expect(reaching.map((file) => Path.relative(exampleDir, file))).toEqual([])
    expect(sources(src).length).toBeGreaterThan(10)
  })
})
