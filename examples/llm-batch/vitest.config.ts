import { mergeConfig, type ViteUserConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

// One test file at a time: the end-to-end files spawn CLI processes, stand-ins and a redis-server,
// and the in-process scenarios read verdicts that CPU contention from a neighbouring file would skew.
const config: ViteUserConfig = { test: { fileParallelism: false } }

export default mergeConfig(shared, config)
