/**
 * Durability with a real crash: the CLI in a child process is killed with SIGKILL mid-run, a torn
 * line is left at the end of its output, and the rerun on the same output finishes the batch:
 * every input id is in the output exactly once, the malformed row included (as failed, which the
 * exit code counts). The
 * crashed run's stand-ins, served from a child process, exit with it.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"
import { collect, isAlive, lineCount, runArgs, sleep, spawnCli, tempDir } from "./utils.js"

it("loses and duplicates nothing across kill -9 and resume", async () => {
  const dir = tempDir()
  const input = Path.join(dir, "in.jsonl")
  const output = Path.join(dir, "out.jsonl")
  const places = ["Paris", "Berlin, DE", "Lyon", "Tokyo", "Lagos", "Lima", "Quito", "Oslo", "Cairo", "Delhi"]
  const rows = Array.from({ length: 900 }, (_, i) => JSON.stringify({ id: `r${i}`, query: `${places[i % 10]}` }))
  rows[17] = "{\"id\": \"r17\", \"query\": "
  // distinct queries, so that the batch takes a few seconds at these quotas
  for (let i = 20; i < rows.length; i++) rows[i] = JSON.stringify({ id: `r${i}`, query: `Place ${i}` })
  Fs.writeFileSync(input, rows.join("\n") + "\n")
  const args = runArgs(input, output, { opencage: 100, photon: 50, nominatim: 25 })

  const first = spawnCli(args)
  const firstDone = collect(first)
  for (let i = 0; i < 300 && lineCount(output) < 150; i++) await sleep(100)
  first.kill("SIGKILL")
  const killed = await firstDone
  // its stand-ins ran in a process of their own, which must not outlive it
  const standIns = /stand-in \(process (\d+)\)/.exec(killed.stdout)
  expect(standIns).not.toBeNull()
  const pid = Number(standIns![1])
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100)
  expect(isAlive(pid)).toBe(false)
  const written = lineCount(output)
  expect(written).toBeGreaterThan(0)
  expect(written).toBeLessThan(900)
  // a write torn by the crash
  Fs.appendFileSync(output, "{\"id\":\"r899\",\"query\":\"Pla")

  const second = await collect(spawnCli([...args, "--json"]))
  // the malformed row fails again (a failed row is tried again on resume), and the exit says so
  expect(second.code, second.stderr).toBe(1)
  expect(second.stderr).toContain("error: 1 of 900 rows failed")
  const lines = Fs.readFileSync(output, "utf8").split("\n").filter((line) => line !== "")
  const records = lines.map((line) => JSON.parse(line) as { id: string; status: string; error?: string })
  const ids = records.map((record) => record.id)
  expect(ids.length).toBe(900)
  expect(new Set(ids).size).toBe(900)
  const malformed = records.find((record) => record.id === "r17")
  expect(malformed?.status).toBe("failed")
  expect(malformed?.error).toMatch(/^line 18:/)
  expect(second.stdout + second.stderr).toMatch(/half-written last line/)
}, 120_000)
