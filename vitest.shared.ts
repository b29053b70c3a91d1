import * as path from "node:path"
import type { ViteUserConfig } from "vitest/config"

const config: ViteUserConfig = {
  test: {
    setupFiles: [path.join(import.meta.dirname, "vitest.setup.ts")],
    include: ["test/**/*.test.ts"],
    fakeTimers: { toFake: undefined },
    sequence: { concurrent: true }
  }
}

export default config
