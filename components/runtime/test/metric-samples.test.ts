import { expect, test } from "bun:test";
import { metricValue } from "../src/metric-samples.ts";

const text = `# HELP svc_x_total calls
# TYPE svc_x_total counter
svc_x_total{method="/a.B/C",code="OK"} 3
svc_x_total{method="/a.B/C",code="UNAVAILABLE"} 1
svc_x_total{method="/a.B/D",code="OK"} 2
svc_x_total_other 9
svc_y{detail="say \\"hi\\", then go"} 0.5
svc_z 7
`;

test("sums the samples of exactly that name whose labels include the given ones; undefined when none", () => {
  expect(metricValue(text, "svc_x_total")).toBe(6);
  expect(metricValue(text, "svc_x_total", { code: "OK" })).toBe(5);
  expect(metricValue(text, "svc_x_total", { method: "/a.B/C", code: "UNAVAILABLE" })).toBe(1);
  expect(metricValue(text, "svc_x_total", { code: "INTERNAL" })).toBeUndefined();
  expect(metricValue(text, "svc_y", { detail: 'say \\"hi\\", then go' })).toBe(0.5);
  expect(metricValue(text, "svc_z")).toBe(7);
  expect(metricValue(text, "svc_missing")).toBeUndefined();
});
