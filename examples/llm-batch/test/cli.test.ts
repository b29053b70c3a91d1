/**
 * The CLI ends and says what happened: a signal prints what the batch did and exits 130 (SIGINT,
 * to the process group as a Ctrl-C sends it) or 143 (SIGTERM); a batch with failed calls exits 1
 * with the count; a `--redis` that does not answer is said at the start, before any call; a prompts
 * file that is not UTF-8 is refused naming the line.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as Prompts from "../src/Prompts.js"
import { exampleDir, quotaArgs, QUOTAS, runCli } from "./utils.js"

/** A loopback port nothing listens on: taken, then let go. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

const waitFor = async (what: string, condition: () => boolean, timeoutMillis: number) => {
  const deadline = Date.now() + timeoutMillis
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMillis / 1000} s for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("the CLI's end", () => {
  for (const [signal, code, toGroup] of [["SIGINT", 130, true], ["SIGTERM", 143, false]] as const) {
    it(`${signal}: prints what the batch did and exits ${code}`, async () => {
      const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...quotaArgs(), "--prompts", "200"], {
        cwd: exampleDir,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      let stderr = ""
      child.stderr.on("data", (chunk) => (stderr += chunk))
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
      child.once("exit", (code, signal) => (exit = { code, signal }))
      try {
        // a progress line with calls done: the batch is under way
        await waitFor("a progress line", () => /\] [1-9]\d*\/200 calls/.test(stderr) || exit !== undefined, 60_000)
        expect(exit, stderr).toBeUndefined()
        process.kill(toGroup ? -child.pid! : child.pid!, signal)
        await waitFor("the CLI to exit", () => exit !== undefined, 20_000)
        expect(exit, stderr).toEqual({ code, signal: null })
        expect(stderr).toMatch(
          /interrupted after [\d.]+ s: \d+ of 200 calls done \(\d+ failed\), [\d,]+ tokens used; the calls in flight were abandoned/
        )
      } finally {
        if (exit === undefined) process.kill(-child.pid!, "SIGKILL")
      }
    }, 120_000)
  }

  it("a batch with failed calls exits 1 with the count, after its report", async () => {
    const port = await closedPort()
    const ran = await runCli(["--url", `http://127.0.0.1:${port}/v1`, ...quotaArgs(), "--prompts", "4"])
    expect(ran.stdout).toMatch(/^4 calls \(4 failed\)/m)
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain("error: 4 of 4 calls failed")
  }, 120_000)

  it("--report writes the run's page, each dimension against its limit, and prints its path", async () => {
    const report = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "sluice-llm-report-")), "run.html")
    const ran = await runCli([...quotaArgs(), "--prompts", "12", "--no-progress", "--report", report])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain(`report: ${report}`)
    const html = Fs.readFileSync(report, "utf8")
    expect(html).toContain("<h2>openai</h2>")
    const data = /<script type="application\/json" id="sluice-report-data">([^<]*)<\/script>/.exec(html)?.[1] ?? ""
    const titles = (JSON.parse(data) as { sections: Array<{ plots: Array<{ title: string }> }> }).sections[0].plots
      .map((plot) => plot.title)
    // the client's limit: 2 % under the quota, per the 5 s window
    const clientRequests = Math.floor(QUOTAS.requests.limit * 0.98)
    expect(titles).toContain(`requests used against its limit of ${clientRequests} per ${QUOTAS.windowMillis / 1000} s`)
    expect(titles.some((title) => title.startsWith("tokens used against its limit of"))).toBe(true)
  }, 120_000)

  it("a --redis that does not answer is said at the start, before any call", async () => {
    const port = await closedPort()
    const ran = await runCli([...quotaArgs(), "--prompts", "4", "--redis", `redis://127.0.0.1:${port}`])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`error: --redis redis://127.0.0.1:${port}: Redis does not answer`)
    expect(ran.stdout).not.toMatch(/calls \(/)
  }, 120_000)

  it("refuses a prompts file that is not UTF-8, naming the line", async () => {
    const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "sluice-llm-")), "prompts.jsonl")
    Fs.writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(JSON.stringify({ id: "a", prompt: "Hello" }) + "\n"),
        Buffer.from("{\"id\":\"b\",\"prompt\":\"Z\xfcrich\"}\n", "latin1")
      ])
    )
    const read = await Effect.runPromise(Effect.either(Prompts.fromFile(file)))
    expect(Either.isLeft(read) && read.left.message).toBe(
      `${file}: line 2 is not valid UTF-8 (a Latin-1 file? convert it first, e.g. iconv -f latin1 -t utf-8)`
    )
  })
})
