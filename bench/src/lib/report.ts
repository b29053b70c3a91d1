/**
 * Shared plumbing for the benchmark suites: timing rounds, medians, peak RSS, a plain-text table
 * for the terminal and a Markdown section in bench/RESULTS.md that each suite owns and rewrites.
 */
import { readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"

/**
 * bench/RESULTS.md. The runner (scripts/bench.mjs) names it, because a suite runs from a bundle
 * whose own location says nothing about the repository's layout.
 */
export const resultsPath = process.env.SLUICE_BENCH_RESULTS ?? join(process.cwd(), "RESULTS.md")

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** Forces a full collection when Node runs with --expose-gc (scripts/bench.mjs sets it). */
export const collectGarbage = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc) gc()
}

/**
 * Samples the resident set size every few milliseconds while `run` is in progress and returns the
 * highest value seen, in bytes. Sampling from a timer is what a user would see in `top`; it can
 * miss a spike shorter than the interval, which is why the interval is short.
 */
export const withPeakRss = async <A>(
  run: () => Promise<A>
): Promise<{ readonly value: A; readonly peakRss: number }> => {
  collectGarbage()
  let peak = process.memoryUsage.rss()
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss()
    if (rss > peak) peak = rss
  }, 5)
  try {
    const value = await run()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { value, peakRss: peak }
  } finally {
    clearInterval(timer)
  }
}

export const formatNs = (ns: number): string =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`

export const formatBytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`

export const formatRatio = (x: number): string => `${x.toFixed(2)}x`

/** A table as aligned plain text, for the terminal. */
export const textTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

/** A table as GitHub Markdown, for RESULTS.md. */
export const markdownTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ]
    .join("\n")

export const machineLine = (): string =>
  `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown CPU"}, ${
    (os.totalmem() / 1024 ** 3).toFixed(0)
  } GiB, ${new Date().toISOString().slice(0, 10)}`

/** The body of the section `## <title>` of RESULTS.md as it is now, or undefined. */
export const readSection = (title: string): string | undefined => {
  let text: string
  try {
    text = readFileSync(resultsPath, "utf8")
  } catch {
    return undefined
  }
  const heading = `## ${title}\n`
  const start = text.indexOf(heading)
  if (start === -1) return undefined
  const next = text.indexOf("\n## ", start + heading.length)
  return text.slice(start + heading.length, next === -1 ? undefined : next).trim()
}

/**
 * Replaces the section `## <title>` of RESULTS.md (up to the next `## ` heading) with `body`, or
 * appends it. Each suite owns exactly one section, so suites can be rerun independently.
 */
export const writeSection = (title: string, body: string): void => {
  let text: string
  try {
    text = readFileSync(resultsPath, "utf8")
  } catch {
    text = "# Benchmark results\n\nWritten by `pnpm bench <suite>`; each suite rewrites its own section.\n"
  }
  const heading = `## ${title}`
  const section = `${heading}\n\n${body.trim()}\n`
  const start = text.indexOf(`${heading}\n`)
  if (start === -1) {
    text = `${text.trimEnd()}\n\n${section}`
  } else {
    const next = text.indexOf("\n## ", start + heading.length)
    text = text.slice(0, start) + section + (next === -1 ? "" : `\n${text.slice(next + 1)}`)
  }
  writeFileSync(resultsPath, text.endsWith("\n") ? text : `${text}\n`)
}
