import { expect, test } from "bun:test";
import { HealthState, serveHealth } from "../index.ts";

test("serveHealth listens on an ephemeral port and answers from a followed role source", async () => {
  let role: "leader" | "follower" = "follower";
  const state = new HealthState("backend", "backend-1", "follower");
  state.follow({ role: () => role, holder: () => (role === "leader" ? "backend-1" : "backend-0"), term: () => 4 });
  const server = serveHealth(state, { port: 0, hostname: "127.0.0.1" });
  try {
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(503);
    expect(await (await fetch(`${server.url}/health/whoami`)).json()).toMatchObject({
      role: "follower",
      holder: "backend-0",
      term: 4,
    });
    role = "leader";
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/health/whoami`)).json()).toMatchObject({
      role: "leader",
      holder: "backend-1",
    });
  } finally {
    await server.stop();
  }
  expect(
    await fetch(`${server.url}/health`).then(
      () => "answered",
      () => "refused",
    ),
  ).toBe("refused");
});

test("without a source, setLeadership fills whoami's holder and term", () => {
  const state = new HealthState("shaper", "shaper-0", "leader");
  state.setLeadership("shaper-0", 9);
  expect(state.snapshot()).toMatchObject({ holder: "shaper-0", term: 9 });
});
