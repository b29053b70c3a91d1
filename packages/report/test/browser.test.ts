/**
 * The report in a real browser: Debian's chromium, headless, driven by playwright-core. A missing
 * chromium fails the test (scripts/test-all.sh installs it), as a missing redis-server does.
 */
import { Report } from "@sluice/report"
import { Effect, TestContext } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { chromium } from "playwright-core"
import { describe, expect, it } from "vitest"
import { twoProviders } from "./run.js"

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? "/usr/bin/chromium"

const rgb = (hex: string): [number, number, number] => [
  parseInt(hex.slice(1, 3), 16),
  parseInt(hex.slice(3, 5), 16),
  parseInt(hex.slice(5, 7), 16)
]

describe("the report in chromium", () => {
  it("draws every plot with data, the verdicts shown, no console error", { timeout: 60_000 }, async () => {
    if (!Fs.existsSync(CHROMIUM)) {
      throw new Error(
        `chromium is not at ${CHROMIUM}: the report's browser test needs it. Install it ` +
          "(apt-get install chromium) or run `bash scripts/test-all.sh`, which does."
      )
    }
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sluice-report-"))
    const file = Path.join(dir, "report.html")
    const input = await Effect.runPromise(Effect.provide(twoProviders, TestContext.TestContext))
    await Effect.runPromise(Report.write(file, input))
    const expectedPlots = Report.model(input).sections.reduce((n, s) => n + s.plots.length, 0)

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
    try {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } })
      const errors: Array<string> = []
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text())
      })
      page.on("pageerror", (error) => errors.push(String(error)))
      // no request leaves the file: anything fetched is a failure
      const requests: Array<string> = []
      page.on("request", (request) => {
        if (!request.url().startsWith("file:")) requests.push(request.url())
      })
      await page.goto(`file://${file}`)
      await page.waitForSelector("body[data-report=drawn]", { timeout: 10_000 })

      const plots = await page.$$eval(".plot", (boxes) =>
        boxes.map((box) => {
          const canvas = box.querySelector("canvas")
          const color = box.getAttribute("data-color") ?? ""
          if (canvas === null) return { id: box.getAttribute("data-plot"), canvas: false, inked: 0, painted: 0, color }
          const context = canvas.getContext("2d")
          const pixels = context?.getImageData(0, 0, canvas.width, canvas.height).data ?? new Uint8ClampedArray()
          const r = parseInt(color.slice(1, 3), 16)
          const g = parseInt(color.slice(3, 5), 16)
          const b = parseInt(color.slice(5, 7), 16)
          let painted = 0
          let inked = 0
          for (let i = 0; i < pixels.length; i += 4) {
            if (pixels[i + 3] === 0) continue
            painted++
            const d = Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b)
            if (d < 60 && pixels[i + 3] > 200) inked++
          }
          return { id: box.getAttribute("data-plot"), canvas: true, inked, painted, color }
        }))
      expect(plots.length).toBe(expectedPlots)
      for (const plot of plots) {
        expect(plot.canvas, `${plot.id} has a canvas`).toBe(true)
        expect(plot.painted, `${plot.id} is not blank`).toBeGreaterThan(0)
        // its first series' own colour is on the canvas: the data was drawn, not only the axes
        expect(plot.inked, `${plot.id} shows its first series in ${plot.color} (${rgb(plot.color)})`).toBeGreaterThan(
          20
        )
      }
      const verdicts = await page.$$eval(".verdict", (nodes) => nodes.map((node) => node.textContent ?? ""))
      const expected = input.providers.map((p) => `${p.verdict?.binding}: ${p.verdict?.reason}`)
      expect(verdicts).toEqual(expected)
      // the provider named like a closing tag is a heading's text
      const headings = await page.$$eval("h2", (nodes) => nodes.map((node) => node.textContent))
      expect(headings).toEqual(input.providers.map((p) => p.recording.provider))
      const screenshot = Path.join(dir, "report.png")
      await page.screenshot({ path: screenshot, fullPage: true })
      expect(Fs.statSync(screenshot).size).toBeGreaterThan(10_000)
      console.log(`report screenshot: ${screenshot}`)
      expect(errors).toEqual([])
      expect(requests).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
