/**
 * A write that fails ends the run with one line naming the output and the cause, a non-zero exit,
 * and an output that resumes: a full disk (a tmpfs of 64 KiB when this process may mount one, else
 * a file system whose writes fail past 64 KiB, in process), and `/dev/full`, which is also never
 * read back as "existing output".
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as Offline from "../harness/Offline.js"
import { baseConfig, distinctInput, readOutput, runCli, runInProcess, tempDir } from "./utils.js"

const DISK_BYTES = 64 * 1024

/** A file system whose files take `capacity` bytes in all, then fail every write with ENOSPC (the part that fits is written). */
const fullAfter = (capacity: number) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs): FileSystem.FileSystem => {
      let used = 0
      const noSpace = (path: string) =>
        new SystemError({
          reason: "Unknown",
          module: "FileSystem",
          method: "writeAll",
          pathOrDescriptor: path,
          description: "ENOSPC: no space left on device, write"
        })
      return {
        ...fs,
        open: (path, options) =>
          Effect.map(fs.open(path, options), (file): FileSystem.File => {
            const limited: FileSystem.File = Object.create(file)
            return Object.assign(limited, {
              writeAll: (buffer: Uint8Array) => {
                const room = Math.max(0, capacity - used)
                used += Math.min(room, buffer.length)
                return buffer.length <= room
                  ? file.writeAll(buffer)
                  : Effect.zipRight(file.writeAll(buffer.subarray(0, room)), Effect.fail(noSpace(path)))
              }
            })
          })
      }
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

/** Mounts a tmpfs of `bytes` at a fresh folder; `undefined` if this process may not. */
const mountTmpfs = (bytes: number): { readonly dir: string; readonly unmount: () => void } | undefined => {
  const dir = tempDir()
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir], { stdio: "ignore" })
  } catch {
    return undefined
  }
  return { dir, unmount: () => execFileSync("umount", [dir]) }
}

const expectComplete = (output: string, ids: ReadonlyArray<string>) => {
  const records = readOutput(output)
  expect(records.length).toBe(ids.length)
  expect(new Set(records.map((record) => record.id))).toEqual(new Set(ids))
  expect(records.filter((record) => record.status === "failed")).toEqual([])
}

const cliArgs = (input: string, output: string) => ["run", "--input", input, "--output", output, "--no-progress"]

/** In process: the run fails with `OutputError` naming the file and ENOSPC; the same output then resumes whole. */
const inProcessFullDisk = async () => {
  const dir = tempDir()
  const input = Path.join(dir, "in.jsonl")
  const output = Path.join(dir, "out.jsonl")
  const ids = distinctInput(input, 1_500)
  const error = await Offline.run(baseConfig(), {
    input,
    rows: 0,
    output,
    fresh: false,
    workers: undefined,
    cache: 10_000,
    progress: false,
    progressEvery: 5
  }, { json: true, quiet: true }).pipe(
    Effect.flip,
    Effect.provide(fullAfter(DISK_BYTES)),
    Effect.provide(NodeContext.layer),
    Effect.runPromise
  )
  expect(error._tag).toBe("OutputError")
  expect(error.message).toBe(`cannot write the output ${output}: ENOSPC: no space left on device, write`)
  expect(Fs.statSync(output).size).toBe(DISK_BYTES)
  await runInProcess(baseConfig(), { output, input, fresh: false })
  expectComplete(output, ids)
}

describe.sequential("a write that fails", () => {
  it(
    "in process: a disk that fills up ends the run with OutputError, and the output resumes whole",
    inProcessFullDisk,
    120_000
  )

  it("the CLI on a full disk: one line naming the file and ENOSPC, exit 1, resumable", async () => {
    const disk = mountTmpfs(DISK_BYTES)
    // not allowed to mount here: the same run in process, on a file system that fills up
    if (disk === undefined) return inProcessFullDisk()
    try {
      const dir = tempDir()
      const input = Path.join(dir, "in.jsonl")
      const ids = distinctInput(input, 1_200)
      const output = Path.join(disk.dir, "out.jsonl")
      const run = await runCli(cliArgs(input, output))
      expect(run.code).toBe(1)
      expect(run.stderr.trim()).toBe(`error: cannot write the output ${output}: ENOSPC: no space left on device, write`)
      expect(run.stdout).not.toMatch(/ERROR|^\s+at /m)
      // somewhere with room, the same output resumes: a torn last line is cut off, nothing is lost
      const moved = Path.join(dir, "out.jsonl")
      Fs.copyFileSync(output, moved)
      const second = await runCli([...cliArgs(input, moved), "--json"])
      expect(second.code, second.stderr).toBe(0)
      expectComplete(moved, ids)
    } finally {
      disk.unmount()
    }
  }, 120_000)

  it("--output /dev/full: not read back as a results file; the write fails in one line, exit 1", async () => {
    const dir = tempDir()
    const input = Path.join(dir, "in.jsonl")
    distinctInput(input, 50)
    const run = await runCli(cliArgs(input, "/dev/full"))
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe("error: cannot write the output /dev/full: ENOSPC: no space left on device, write")
    expect(run.stdout).not.toMatch(/ERROR|SyntaxError|^\s+at /m)
  }, 60_000)

  it("a results file with a line that is not a record: one line naming the file and the line, exit 1", async () => {
    const dir = tempDir()
    const input = Path.join(dir, "in.jsonl")
    distinctInput(input, 50)
    const output = Path.join(dir, "out.jsonl")
    Fs.writeFileSync(output, "{\"id\":\"r1\",\"status\":\"ok\"}\nnot json\n")
    const run = await runCli(cliArgs(input, output))
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toMatch(
      new RegExp(`^error: cannot resume from the output ${output}: line 2 is not a result record \\(.*JSON.*\\)$`)
    )
  }, 60_000)
})
