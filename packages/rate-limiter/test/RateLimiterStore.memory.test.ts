import { RateLimiterStore } from "../src/index.js"
import { storeContract } from "./contract/storeContract.js"

storeContract("memory", RateLimiterStore.layerMemory)
