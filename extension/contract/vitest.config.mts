import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: ".",
    include: ["contract/**/*.test.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 60_000,
    reporters: ["default", "json"],
    outputFile: { json: ".test-results/contract.json" },
  },
});
