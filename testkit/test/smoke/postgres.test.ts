import { afterAll, expect, test } from "bun:test";
import { randomName, stackEnv } from "@svc/testkit";
import { SQL } from "bun";

const sql = new SQL(stackEnv().postgresUrl);
const table = randomName("smoke").replaceAll("-", "_");

afterAll(async () => {
  await sql.unsafe(`drop table if exists ${table}`);
  await sql.close();
});

test("a row written to PostgreSQL is read back", async () => {
  await sql.unsafe(`create table ${table} (id text primary key, at timestamptz not null default now())`);
  const id = randomName("row");
  await sql`insert into ${sql(table)} (id) values (${id})`;
  const rows = await sql<{ id: string }[]>`select id from ${sql(table)} where id = ${id}`;
  expect([...rows]).toEqual([{ id }]);
});
