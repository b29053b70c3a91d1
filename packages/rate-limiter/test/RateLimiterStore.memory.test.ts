import { storeContract } from "@sluice/test-utils/storeContract"
import { RateLimiterStore } from "../src/index.js"

storeContract("memory", RateLimiterStore.layerMemory)
