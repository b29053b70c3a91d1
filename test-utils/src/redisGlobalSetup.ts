/**
 * One redis-server for the whole test run, on a free loopback port: its URL reaches the tests
 * through `inject("redisUrl")`. Tests that restart Redis or read its command statistics start
 * their own server (see `redisServer.ts`). Every Redis package of sluice runs this setup: its
 * vitest.config.ts names `@sluice/test-utils/redisGlobalSetup` in `globalSetup`.
 */
import type { TestProject } from "vitest/node"
import { startRedisServer } from "./redisServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedisServer()
  project.provide("redisUrl", server.url)
  return () => server.stop()
}
