import { RateLimiterStore } from "@sluice/rate-limiter"
import { storeVectors } from "./contract/driver.js"

storeVectors("memory", RateLimiterStore.layerMemory)
