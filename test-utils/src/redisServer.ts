/** The redis-server launcher, shared by both Effect lines: it lives in core/testing. */
export * from "../../core/testing/redisServer.js"
