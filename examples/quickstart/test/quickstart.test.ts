/**
 * The quickstart as a user runs it: a latitude of its own per city (the stand-in used to answer one
 * for all), and the very output the root README prints for it, so that the copy there reads what
 * the program does.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"

const exampleDir = Path.join(import.meta.dirname, "..")

it("prints each city's own latitude, and what the README says it prints", () => {
  const ran = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: exampleDir,
    encoding: "utf8",
    timeout: 120_000
  })
  expect(ran.status, ran.stderr).toBe(0)
  const lines = ran.stdout.trim().split("\n")
  const latitudes = lines.flatMap((line) => {
    const found = /^(\S+): lat ([\d.]+)$/.exec(line)
    return found === null ? [] : [[found[1], found[2]] as const]
  })
  expect(Object.fromEntries(latitudes)).toEqual({
    Lyon: "45.76",
    Porto: "41.15",
    Turku: "60.45",
    Gdańsk: "54.35",
    Bergen: "60.39"
  })
  const readme = Fs.readFileSync(Path.join(exampleDir, "..", "..", "README.md"), "utf8")
  const printed = /It prints:\n\n```text\n([\s\S]*?)\n```/.exec(readme)
  expect(printed, "the README's quickstart output block").not.toBeNull()
  expect(lines).toEqual(printed![1].split("\n"))
}, 150_000)
