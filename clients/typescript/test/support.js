// Shared by the test files: the binary under test and one loopback mock provider per scenario,
// both handed over by the Rust harness (tests/clients_typescript.rs) in the environment:
// OPENTURN_BIN, and OPENTURN_TEST_PROVIDERS (JSON: scenario name → base URL).
// Run through `cargo test --test clients_typescript`; run directly, these tests skip.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { OpenturnClient } from "../src/index.js";

/** Why the tests cannot run here, or null. */
export const skipReason =
  process.env.OPENTURN_BIN && process.env.OPENTURN_TEST_PROVIDERS
    ? null
    : "OPENTURN_BIN / OPENTURN_TEST_PROVIDERS unset: run through `cargo test --test clients_typescript`";

/** Every test is bounded, so a hung daemon fails it instead of hanging the run. */
export const TIMEOUT_MS = 60_000;

/** @param {string} scenario */
export function providerConfig(scenario) {
  const providers = JSON.parse(process.env.OPENTURN_TEST_PROVIDERS ?? "{}");
  if (!(scenario in providers)) {
    throw new Error(`no provider for scenario ${scenario}; the harness has ${Object.keys(providers)}`);
  }
  return {
    model: "gpt-5",
    model_provider: "mock",
    "model_providers.mock.name": "mock",
    "model_providers.mock.base_url": providers[scenario],
    "model_providers.mock.env_key": "OPENTURN_TEST_KEY",
    "model_providers.mock.request_max_retries": 0,
    "model_providers.mock.stream_max_retries": 0,
  };
}

/** A fresh folder, removed by `cleanup`. */
export async function tempDir() {
  return mkdtemp(join(tmpdir(), "openturn-client-test-"));
}

/** @param {string} dir */
export async function cleanup(dir) {
  await rm(dir, { recursive: true, force: true });
}

/**
 * A client against `scenario`'s provider with `home` as OPENTURN_HOME.
 * @param {string} scenario
 * @param {string} home
 * @param {import("../src/client.js").StartOptions} [options]
 */
export function startClient(scenario, home, options = {}) {
  return OpenturnClient.start({
    binary: process.env.OPENTURN_BIN,
    config: providerConfig(scenario),
    env: { OPENTURN_HOME: home, OPENTURN_TEST_KEY: "sk-test-key" },
    ...options,
  });
}
