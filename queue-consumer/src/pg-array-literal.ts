/**
 * PostgreSQL array literals (`{"a","b"}`, `{1,2}`) for the index's `unnest` of column arrays, sent as one text
 * parameter each and cast server-side (`$1::text[]`). Bun's `sql.array` quotes element by element in JavaScript;
 * the batch's columns rarely hold a quote or a backslash, so the usual case is one native `join` — the arrays were a
 * tenth of the writer's CPU (bench/README.md, "What limits it").
 */

const NEEDS_ESCAPE = /["\\]/;

/**
 * `{"v1","v2",…}`: every element quoted (so `NULL`, empty strings and spaces stay text), `"` and `\` escaped.
 * `mayNeedEscape` false (the caller knows no element holds either) skips the check.
 */
export function textArrayLiteral(values: readonly string[], mayNeedEscape = true): string {
  if (values.length === 0) return "{}";
  if (!mayNeedEscape || !NEEDS_ESCAPE.test(values.join(""))) return `{"${values.join('","')}"}`;
  return `{${values.map((value) => `"${value.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}

/** `{1,2,…}` of integers. */
export function integerArrayLiteral(values: readonly number[]): string {
  return `{${values.join(",")}}`;
}
