import { vi } from "vitest";

// jest-mock-vscode types its argument as jest; vitest's vi has the same shape
vi.mock("vscode", async () => (await import("jest-mock-vscode")).createVSCodeMock(vi as any));
