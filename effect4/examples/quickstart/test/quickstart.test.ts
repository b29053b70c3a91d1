/**
 * The quickstart as a user runs it: both refusals, each from its own bulkhead, and the very output
 * its README prints, so that the copy there reads what the program does.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"

const exampleDir = Path.join(import.meta.dirname, "..")

it("serves four lookups, refuses the fifth and times out the slow queue, as its README says", () => {
  const ran = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: exampleDir,
    encoding: "utf8",
    timeout: 60_000
  })
  expect(ran.status, ran.stderr).toBe(0)
  const lines = ran.stdout.trim().split("\n")
  expect(lines.filter((line) => /^\S+: lat [\d.]+$/.test(line))).toHaveLength(4)
  expect(lines).toContain(
    `Bergen: refused (bulkhead "geo" is full: 2 of 2 permits in use and 2 callers queued (maxWaiting 2); ` +
      "refused a call for 1 permit)"
  )
  expect(lines.some((line) => line.startsWith(`Lyon: queued too long (bulkhead "weather" gave up after waiting 300ms`)))
    .toBe(true)
  const readme = Fs.readFileSync(Path.join(exampleDir, "README.md"), "utf8")
  const printed = /It prints:\n\n```text\n([\s\S]*?)\n```/.exec(readme)
  expect(printed, "the README's output block").not.toBeNull()
  expect(lines).toEqual(printed![1].split("\n"))
}, 90_000)
