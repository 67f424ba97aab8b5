import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    setupFiles: ["test/setup.ts"],
    reporters: ["default", "json"],
    outputFile: { json: ".test-results/unit.json" },
  },
});
