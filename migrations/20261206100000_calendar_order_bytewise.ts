import type { Knex } from 'knex';
import { INDEXES as ORDERED, rebuild } from './20261205100000_calendar_order';

// The calendar merges its reads in Node and breaks ties on one instant (or one date) by id, and
// a page's cursor is the last entry Node kept: each read after a cursor asks Postgres for the
// rows after (instant, id). Node compares ids code unit by code unit; Postgres compares them in
// the database's collation, which in most locales (en_US.UTF-8, as in docker-compose.yml's
// image) orders `idea_a…` before `idea_B…`. The two orders disagreed on mixed-case ids, and an
// entry tied with a page's last one could be left out of every page. The reads now compare and
// order ids bytewise (`collate "C"`: Node's order, ids being ASCII), and the three indexes that
// hold a read's order end with the id in that collation, so each read is still a range of its
// index. Rebuilt CONCURRENTLY, as in migration 20261205100000.

export const config = { transaction: false };

/** Each index as migration 20261205100000 left it (before) and with its last column, the id, bytewise (after). */
const INDEXES = ORDERED.map(([name, , withId]): [name: string, before: string, after: string] => [
  name,
  withId,
  withId.replace(/, id\) where /, ', id collate "C") where '),
]);

export async function up(knex: Knex): Promise<void> {
  for (const [name, , after] of INDEXES) {
    if (!after.includes('collate "C"')) throw new Error(`${name}: no id column to make bytewise in ${after}`);
    await rebuild(knex, name, after);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [name, before] of INDEXES) await rebuild(knex, name, before);
}
